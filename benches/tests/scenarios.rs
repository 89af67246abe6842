//! Every implementation of every scenario delivers every element: its checksum equals the
//! scenario's expected one, for a few sizes, at every parameter. A lossy peer (tokio's
//! broadcast) returns the deliveries it made instead: never more than were due.

#[test]
fn every_implementation_delivers_every_element() {
    for s in rs_benches::scenarios::all() {
        for cell in s.cells() {
            let (imp, p, label) = s.resolve(cell);
            for n in [0, 1, 7, 3000] {
                let got = (imp.run)(p, n);
                if imp.lossy {
                    let due = n * s.deliveries.map_or(1, |d| d(p));
                    assert!(
                        got <= due,
                        "{}: {} at {label}, n={n}: {got} deliveries for {due} due",
                        s.id,
                        imp.name
                    );
                } else {
                    assert_eq!(
                        got,
                        (s.expected)(p, n),
                        "{}: {} at {label}, n={n}",
                        s.id,
                        imp.name
                    );
                }
            }
        }
    }
}
