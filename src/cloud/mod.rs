//! The cloud side: what can be launched, where, at what price, from which image.
//!
//! - [`catalog`]: the instance-type catalog (embedded AWS snapshot, `--catalog FILE`), producing
//!   the model's [`InstanceType`](crate::model::instance_type::InstanceType)s. Planning code
//!   depends on the catalog, never on how it was obtained.
//! - [`types`]: the narrow [`Cloud`] trait over the EC2/SSM calls the tool makes, its data and
//!   errors; [`aws`] implements it with the AWS SDK, [`fake`] in memory for unit tests.
//! - [`ami`] and [`network`]: what a node class resolves to (AMIs per docs/karpenter.md §3; subnets
//!   and security groups), planned purely and fetched through [`Cloud`].
//! - [`live_catalog`]: the catalog from DescribeInstanceTypes/DescribeInstanceTypeOfferings,
//!   cached under the XDG cache dir.
//! - [`reservations`]: capacity reservations a class selects, from DescribeCapacityReservations,
//!   added to the live catalog as reserved offerings.
//! - [`profile`]: the instance profile a class launches with (flag, class, role via IAM,
//!   global settings).

pub mod ami;
pub mod aws;
pub mod catalog;
pub mod fake;
pub mod launch;
pub mod live_catalog;
pub mod network;
pub mod profile;
pub mod reservations;
pub mod types;
pub mod userdata;

pub use catalog::{Catalog, CatalogError, InstanceTypeContext};
pub use types::{CallCounts, Cloud, CloudError, Compute};
