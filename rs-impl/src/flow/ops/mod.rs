//! The built-in linear operators, one file each. Each is an [`Operator`](super::Operator):
//! what [`Flow`](super::Flow)'s methods append, and what
//! [`OperatorStage`](super::OperatorStage) runs as an interpreter stage of its own.
//!
//! | operator | [`Flow`](super::Flow) method | what it does |
//! |---|---|---|
//! | [`Identity`] | [`identity`](super::Flow::identity) | passes every element through |
//! | [`Map`] | [`map`](super::Flow::map) | applies a function to every element |
//! | [`Filter`] | [`filter`](super::Flow::filter) | keeps the elements a predicate holds for |
//! | [`Take`] | [`take`](super::Flow::take) | passes the first `n`, then completes and cancels upstream |
//! | [`Skip`] | [`skip`](super::Flow::skip) | drops the first `n` |
//! | [`Scan`] | [`scan`](super::Flow::scan) | emits the running accumulation after each element |
//! | [`Fold`] | [`fold`](super::Flow::fold) | emits the accumulation once, on completion |

mod filter;
mod fold;
mod identity;
mod map;
mod scan;
mod skip;
mod take;

pub use filter::Filter;
pub use fold::Fold;
pub use identity::Identity;
pub use map::Map;
pub use scan::Scan;
pub use skip::Skip;
pub use take::Take;
