//! Shared pieces of the self-tests: deliberately broken implementations built from small
//! configurable knobs, the checks that cannot fail, and the assertions every self-test makes.
//! Each self-test uses part of it.
#![allow(dead_code)]

pub(crate) mod broken_adapter;
pub(crate) mod broken_multicast;
pub(crate) mod broken_on_upstream;
pub(crate) mod broken_processor;
pub(crate) mod broken_publisher;
pub(crate) mod broken_stream;
pub(crate) mod broken_subscriber;
pub(crate) mod cannot_fail;
pub(crate) mod expect;
