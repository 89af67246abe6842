//! The ranges [`range`](super::range) accepts.

use std::ops::{Range, RangeFrom, RangeInclusive};

mod sealed {
    pub trait Sealed {}
}

/// An integer range that [`range`](super::range) can publish: `a..b`, `a..=b`, or the open
/// `a..`, which becomes `a..=MAX` (so it ends instead of overflowing). Sealed: implemented
/// for the ranges of every primitive integer type.
pub trait IntegerRange: sealed::Sealed {
    /// The bounded iterator published.
    type Iter: Iterator + Clone;

    /// The range as a bounded iterator.
    fn into_bounded(self) -> Self::Iter;
}

macro_rules! integer_ranges {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for Range<$t> {}
        impl IntegerRange for Range<$t> {
            type Iter = Range<$t>;
            fn into_bounded(self) -> Range<$t> {
                self
            }
        }

        impl sealed::Sealed for RangeInclusive<$t> {}
        impl IntegerRange for RangeInclusive<$t> {
            type Iter = RangeInclusive<$t>;
            fn into_bounded(self) -> RangeInclusive<$t> {
                self
            }
        }

        impl sealed::Sealed for RangeFrom<$t> {}
        impl IntegerRange for RangeFrom<$t> {
            type Iter = RangeInclusive<$t>;
            fn into_bounded(self) -> RangeInclusive<$t> {
                self.start..=<$t>::MAX
            }
        }
    )*};
}

integer_ranges!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);
