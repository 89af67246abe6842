//! In-crate tests of the fanout: the ring buffer's layout (Pekko's six cases), the complexity
//! regression with its test-only quadratic variant, and the randomized model-based test.
