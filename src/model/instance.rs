//! An EC2 instance as the cloud describes it: the slim facts launch, drift and garbage
//! collection read (the AWS adapter fills it from DescribeInstances).

use std::collections::BTreeMap;

/// An instance as DescribeInstances returns it (what launch, drift and GC need).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Instance {
    /// `i-…`.
    pub id: String,
    /// Instance type.
    pub instance_type: String,
    /// Zone.
    pub zone: String,
    /// Subnet.
    pub subnet_id: Option<String>,
    /// AMI.
    pub image_id: String,
    /// `pending`, `running`, `shutting-down`, `terminated`, …
    pub state: String,
    /// `spot` when it is a spot instance, `reserved` when launched into a capacity reservation
    /// it was restricted to, otherwise `on-demand`.
    pub capacity_type: String,
    /// Security group ids.
    pub security_group_ids: Vec<String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}
