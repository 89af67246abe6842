//! [`PublisherFactory`]: a [`PublisherVerification`] made of closures, for one-line
//! registration.

use std::fmt;

use super::{BoxPublisher, PublisherVerification, DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER};

type Create<T> = Box<dyn Fn(u64) -> BoxPublisher<T> + Send + Sync>;
type CreateFailed<T> = Box<dyn Fn() -> BoxPublisher<T> + Send + Sync>;

/// A publisher verification built from closures.
///
/// # Examples
///
/// ```
/// use rs_api::Error;
/// use rs_tck::publisher::{PublisherFactory, PublisherVerification};
///
/// let v = PublisherFactory::new(|n| Box::new(rs_impl::source::range(0..n)))
///     .with_failed(|| Box::new(rs_impl::source::failed(Error::msg("boom"))))
///     .with_max_elements(1000);
/// assert_eq!(v.max_elements_from_publisher(), 1000);
/// assert!(v.create_failed_publisher().is_some());
/// let suite = rs_tck::publisher::verify("range", v);
/// assert_eq!(suite.tests.len(), 38);
/// ```
pub struct PublisherFactory<T> {
    create: Create<T>,
    failed: Option<CreateFailed<T>>,
    max_elements: u64,
    recursion_depth: u64,
    skip_stochastic: bool,
}

impl<T> fmt::Debug for PublisherFactory<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublisherFactory")
            .field("max_elements", &self.max_elements)
            .field("has_failed", &self.failed.is_some())
            .finish_non_exhaustive()
    }
}

impl<T> PublisherFactory<T> {
    /// A verification whose `create_publisher(n)` is `create(n)`; the other hooks keep their
    /// defaults.
    pub fn new(create: impl Fn(u64) -> BoxPublisher<T> + Send + Sync + 'static) -> Self {
        PublisherFactory {
            create: Box::new(create),
            failed: None,
            max_elements: DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER,
            recursion_depth: 1,
            skip_stochastic: false,
        }
    }

    /// Sets `create_failed_publisher`.
    pub fn with_failed(
        mut self,
        failed: impl Fn() -> BoxPublisher<T> + Send + Sync + 'static,
    ) -> Self {
        self.failed = Some(Box::new(failed));
        self
    }

    /// Sets `max_elements_from_publisher`.
    pub fn with_max_elements(mut self, max: u64) -> Self {
        self.max_elements = max;
        self
    }

    /// Sets `bounded_depth_of_on_next_and_request_recursion`.
    pub fn with_recursion_depth(mut self, depth: u64) -> Self {
        self.recursion_depth = depth;
        self
    }

    /// Sets `skip_stochastic_tests`.
    pub fn skipping_stochastic_tests(mut self, skip: bool) -> Self {
        self.skip_stochastic = skip;
        self
    }
}

impl<T> PublisherVerification for PublisherFactory<T>
where
    T: Send + fmt::Debug + PartialEq + 'static,
{
    type Item = T;

    fn create_publisher(&self, elements: u64) -> BoxPublisher<T> {
        (self.create)(elements)
    }

    fn create_failed_publisher(&self) -> Option<BoxPublisher<T>> {
        self.failed.as_ref().map(|f| f())
    }

    fn max_elements_from_publisher(&self) -> u64 {
        self.max_elements
    }

    fn bounded_depth_of_on_next_and_request_recursion(&self) -> u64 {
        self.recursion_depth
    }

    fn skip_stochastic_tests(&self) -> bool {
        self.skip_stochastic
    }
}
