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
    /// `Placement.PartitionNumber`: the partition of a partition placement group EC2 put it in.
    pub partition: Option<i32>,
}

/// The EC2 tenancy a NodeClaim launches with (`Placement.Tenancy` of its launch templates) and
/// its node's `karpenter.k8s.aws/instance-tenancy` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Tenancy {
    /// Shared hardware.
    #[default]
    Default,
    /// Dedicated hardware.
    Dedicated,
}

impl Tenancy {
    /// EC2's (and the label's) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Tenancy::Default => "default",
            Tenancy::Dedicated => "dedicated",
        }
    }

    /// The tenancy of a NodeClaim with these requirements: `default` when its
    /// `instance-tenancy` requirement is absent or admits `default`, `dedicated` when it admits
    /// only `dedicated` (`aws v1.14.1: pkg/providers/instance/instance.go` `getTenancyType`).
    pub fn of(requirements: &crate::model::requirements::Requirements) -> Tenancy {
        match requirements.get_ref(crate::model::labels::INSTANCE_TENANCY) {
            Some(r) if !r.has(Tenancy::Default.as_str()) && r.has(Tenancy::Dedicated.as_str()) => {
                Tenancy::Dedicated
            }
            _ => Tenancy::Default,
        }
    }
}
