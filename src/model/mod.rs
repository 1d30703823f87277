//! The pure model: quantities, requirements, labels, taints, slim pods and nodes, NodePools,
//! node classes and instance types. No I/O, no async, no API client types.

pub mod buffer;
pub mod digest;
pub mod go_sort;
pub mod instance;
pub mod instance_type;
pub mod labels;
pub mod legacy_selector;
pub mod node;
pub mod nodeclaim;
pub mod nodepool;
pub mod overhead;
pub mod overlay;
pub mod placement_group;
pub mod pod;
pub mod quantity;
pub mod requirements;
pub mod reservation;
pub mod resources;
pub mod selector;
pub mod storage;
pub mod taints;
pub mod time;

#[cfg(test)]
mod tests;
