//! The checks no implementation can fail, per verification: decided by the types (skipped with
//! the reason) or untested (the reason says why). Every other check has a should-fail case.

/// The publisher verification's.
pub(crate) const PUBLISHER: &[&str] = &[
    // Not a check: the report of the multicast declaration (skipped, naming the multicast
    // checks skipped with it, when nothing is declared; passed otherwise).
    "declaration_max_supported_subscribers",
    "required_spec109_subscribe_throw_npe_on_null_subscriber",
    "untested_spec110_reject_a_subscription_request_if_the_same_subscriber_subscribes_twice",
    "untested_spec304_request_should_not_perform_heavy_computations",
    "untested_spec305_cancel_must_not_synchronously_perform_heavy_computation",
];

/// The subscriber whitebox verification's.
pub(crate) const WHITEBOX: &[&str] = &[
    "untested_spec202_should_asynchronously_dispatch",
    "untested_spec211_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events",
    "untested_spec212_must_not_call_on_subscribe_more_than_once_based_on_object_equality_spec_violation",
    "required_spec213_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null",
    "required_spec213_on_next_must_throw_null_pointer_exception_when_parameters_are_null",
    "required_spec213_on_error_must_throw_null_pointer_exception_when_parameters_are_null",
    "untested_spec315_cancel_must_not_throw_exception_and_must_signal_on_error",
    "untested_spec316_request_must_not_throw_exception_and_must_on_error_the_subscriber",
];

/// The subscriber blackbox verification's.
pub(crate) const BLACKBOX: &[&str] = &[
    "untested_spec202_blackbox_should_asynchronously_dispatch",
    "untested_spec206_blackbox_must_call_subscription_cancel_if_it_is_no_longer_valid",
    "untested_spec208_blackbox_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel",
    "untested_spec211_blackbox_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events",
    "untested_spec212_blackbox_must_not_call_on_subscribe_more_than_once_based_on_object_equality",
    "required_spec213_blackbox_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null",
    "required_spec213_blackbox_on_next_must_throw_null_pointer_exception_when_parameters_are_null",
    "required_spec213_blackbox_on_error_must_throw_null_pointer_exception_when_parameters_are_null",
    "untested_spec308_blackbox_request_must_register_given_number_elements_to_be_produced",
    "untested_spec314_blackbox_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists",
    "untested_spec315_blackbox_cancel_must_not_throw_exception_and_must_signal_on_error",
    "untested_spec316_blackbox_request_must_not_throw_exception_and_must_on_error_the_subscriber",
];

/// The identity-processor verification's: the publisher's and the whitebox's, except 3.15 and
/// 3.16, which it runs on the processor's downstream subscription (where they can fail).
pub(crate) fn processor() -> Vec<&'static str> {
    PUBLISHER
        .iter()
        .chain(WHITEBOX)
        .copied()
        .filter(|n| !n.starts_with("untested_spec315") && !n.starts_with("untested_spec316"))
        .collect()
}
