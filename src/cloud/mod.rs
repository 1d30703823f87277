//! The cloud side of planning: what can be launched, where, and at what price.
//!
//! Today this is the instance-type [`catalog`]: the embedded AWS snapshot and `--catalog FILE`
//! custom catalogs, both producing the model's [`InstanceType`](crate::model::instance_type::InstanceType)s.
//! Planning code depends on the catalog, never on how it was obtained, so live EC2 data can
//! replace the snapshot without touching the scheduler.

pub mod catalog;

pub use catalog::{Catalog, CatalogError, InstanceTypeContext};
