//! Every implementation of every scenario delivers every element: its checksum equals the
//! scenario's expected one, for a few sizes, at every parameter.

#[test]
fn every_implementation_delivers_every_element() {
    for s in rs_benches::scenarios::all() {
        for cell in s.cells() {
            let (imp, p, label) = s.resolve(cell);
            for n in [0, 1, 7, 3000] {
                assert_eq!(
                    (imp.run)(p, n),
                    (s.expected)(p, n),
                    "{}: {} at {label}, n={n}",
                    s.id,
                    imp.name
                );
            }
        }
    }
}
