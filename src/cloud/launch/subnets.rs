//! Which subnet a launch goes to: per zone the one with the most free IPs after this run's
//! earlier launches took theirs ([`InflightIps`], `aws v1.14.1: pkg/providers/subnet/subnet.go`).

use super::*;

/// Per zone, the subnet with the most free IPs; on a tie the earlier one, `subnets` being in
/// the class status's order (free IPs when read, then id: `Network::subnets`, which
/// [`InflightIps::apply`] keeps) — `aws v1.14.1: pkg/providers/subnet/subnet.go`
/// `ZonalSubnetsForLaunch` walks `status.subnets` and replaces a zone's pick only on strictly
/// more IPs (`currentZonalSubnetIPAddressCount >= newZonalSubnetIPAddressCount`: `continue`).
pub fn subnet_per_zone(subnets: &[Subnet]) -> BTreeMap<String, &Subnet> {
    let mut out: BTreeMap<String, &Subnet> = BTreeMap::new();
    for s in subnets {
        let better = match out.get(&s.zone) {
            None => true,
            Some(cur) => s.available_ips > cur.available_ips,
        };
        if better {
            out.insert(s.zone.clone(), s);
        }
    }
    out
}

/// The free IPs this run's launches have taken from their subnets (`aws v1.14.1:
/// pkg/providers/subnet/subnet.go` `ZonalSubnetsForLaunch`, `UpdateInflightIPs`): a launch
/// takes from the subnet its instance landed in the pods its NodeClaim's smallest type in that
/// zone holds — the IPs it will use — so the next launch of the run in that zone picks the
/// subnet with the most free IPs after it. Karpenter deducts from every zone's subnet before
/// CreateFleet and gives back what the fleet did not use (all of it when the call fails): the
/// same counts once each launch is done, which is when ours are read. Kept for the run: the
/// subnets are read once per run, as Karpenter keeps its counts until its next DescribeSubnets.
///
/// A subnet CreateFleet answered `InsufficientFreeAddressesInSubnet` for is full for the rest of
/// the run ([`InflightIps::record_errors`]; `instance.go` → `subnet.go` `UpdateICEdSubnet`: its
/// count becomes 0, so another subnet of its zone with free IPs is picked; and
/// `cache/unavailableofferings.go` `MarkSubnetUnavailable`: a zone whose every subnet is full is
/// offered no more, so its subnets are left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InflightIps {
    /// Subnet id → free IPs after this run's launches.
    free: BTreeMap<String, i64>,
    /// Subnets CreateFleet found without a free address this run.
    full: BTreeSet<String>,
}

impl InflightIps {
    /// `subnets` with each one's free IPs after this run's launches, in the status's order
    /// (free IPs when read, then id; `pkg/controllers/nodeclass/subnet.go` sorts
    /// `status.subnets` so), which breaks [`subnet_per_zone`]'s ties; the subnets of a zone whose
    /// every subnet was found full are left out.
    pub fn apply(&self, subnets: &[Subnet]) -> Vec<Subnet> {
        let mut ordered: Vec<&Subnet> = subnets.iter().collect();
        ordered.sort_by(|a, b| {
            b.available_ips
                .cmp(&a.available_ips)
                .then_with(|| a.id.cmp(&b.id))
        });
        let zone_full = |zone: &str| {
            subnets
                .iter()
                .filter(|s| s.zone == zone)
                .all(|s| self.full.contains(&s.id))
        };
        ordered
            .into_iter()
            .filter(|s| !zone_full(&s.zone))
            .map(|s| Subnet {
                available_ips: self.free.get(&s.id).copied().unwrap_or(s.available_ips),
                ..s.clone()
            })
            .collect()
    }

    /// Records a launch's pool errors: a subnet answered `InsufficientFreeAddressesInSubnet` has
    /// no free IP for the rest of the run (`subnet.go` `UpdateICEdSubnet`).
    pub fn record_errors(&mut self, errors: &[PoolError]) {
        for e in errors {
            if e.code == SUBNET_FULL && !e.subnet_id.is_empty() {
                self.free.insert(e.subnet_id.clone(), 0);
                self.full.insert(e.subnet_id.clone());
            }
        }
    }

    /// Free IPs of a subnet after this run's launches, when one took some.
    pub fn free(&self, subnet_id: &str) -> Option<i64> {
        self.free.get(subnet_id).copied()
    }

    /// Records a launch of `plan` (made from `subnets`, as [`InflightIps::apply`] gave them)
    /// whose `instance` now runs: its subnet loses the pods of the smallest type the plan
    /// offered in the instance's zone (`subnet.go` `minPods`).
    pub fn launched(
        &mut self,
        subnets: &[Subnet],
        plan: &LaunchPlan,
        types: &BTreeMap<String, TypeFacts>,
        instance: &Instance,
    ) {
        let pool_subnet = plan
            .pools
            .iter()
            .find(|p| p.instance_type == instance.instance_type && p.zone == instance.zone)
            .map(|p| p.subnet_id.clone());
        let Some(subnet_id) = instance.subnet_id.clone().or(pool_subnet) else {
            return;
        };
        let Some(subnet) = subnets.iter().find(|s| s.id == subnet_id) else {
            return;
        };
        let predicted = predicted_ips(plan, types, &subnet.zone);
        let free = self
            .free
            .get(&subnet.id)
            .copied()
            .unwrap_or(subnet.available_ips);
        self.free.insert(subnet.id.clone(), free - predicted);
    }
}

/// The IPs a launch of `plan` in `zone` is predicted to use: the fewest pods of its types offered
/// there (`aws v1.14.1: pkg/providers/subnet/subnet.go` `minPods`); 0 with none.
pub fn predicted_ips(plan: &LaunchPlan, types: &BTreeMap<String, TypeFacts>, zone: &str) -> i64 {
    plan.pools
        .iter()
        .filter(|p| p.zone == zone)
        .filter_map(|p| types.get(&p.instance_type))
        .map(|f| f.max_pods)
        .min()
        .unwrap_or(0)
}
