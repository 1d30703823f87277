//! The AWS call counter: an SDK interceptor that records every operation (`EC2.DescribeImages`)
//! once per call (before serialization: the operation's metadata is not in the config bag
//! before that) and once per HTTP attempt, so `-v` and JSON outputs can report how many calls
//! a command cost (docs/performance.md B3's budget is checked with it).

use aws_sdk_ec2::config::interceptors::{
    BeforeSerializationInterceptorContextRef, BeforeTransmitInterceptorContextRef,
};
use aws_sdk_ec2::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::Metadata;

use crate::cloud::types::CallCounter;

/// Counts calls into a shared [`CallCounter`]; one instance is registered on every client.
#[derive(Debug, Clone)]
pub struct CountingInterceptor(pub CallCounter);

fn operation(cfg: &ConfigBag) -> String {
    match cfg.load::<Metadata>() {
        Some(m) => format!("{}.{}", m.service(), m.name()),
        None => "unknown".to_string(),
    }
}

impl Intercept for CountingInterceptor {
    fn name(&self) -> &'static str {
        "CallCounter"
    }

    fn read_before_serialization(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.call(&operation(cfg));
        Ok(())
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.attempt(&operation(cfg));
        Ok(())
    }
}
