//! Whether a replacement is cheaper, as Karpenter compares it: the replacement's options are
//! ordered by price and kept only where their *worst* launch price (the most expensive
//! available offering of the capacity type that would launch) is below the candidates' summed
//! price; spot-to-spot has its own gate and flexibility rule; multi-node drops options of a type
//! being removed that cost at least as much as that node.
//!
//! Upstream: `core v1.14.1: pkg/controllers/disruption/consolidation.go computeConsolidation,
//! computeSpotToSpotConsolidation`, `multinodeconsolidation.go filterOutSameInstanceType`,
//! `pkg/controllers/provisioning/scheduling/nodeclaim.go
//! RemoveInstanceTypeOptionsByPriceAndMinValues`, `pkg/cloudprovider/types.go WorstLaunchPrice,
//! OrderByPrice, Compatible, SatisfiesMinValues`; `core v0.37.7: disruption/helpers.go
//! filterByPrice, worstLaunchPrice`; `core v0.31.4: deprovisioning/consolidation.go` (spot to
//! spot never).

use std::collections::BTreeSet;

use super::candidate::Candidate;
use super::cluster::Cluster;
use super::input::Release;
use super::reason::Reason;
use super::report::Replacement;
use super::sim::{Claim, PodRef};
use crate::model::instance_type::{InstanceType, Offering, ON_DEMAND, RESERVED, SPOT};
use crate::model::labels;
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::resources::Resources;

/// `MinInstanceTypesForSpotToSpotConsolidation`.
pub(crate) const SPOT_TO_SPOT_MIN_TYPES: usize = 15;

/// Which offerings a NodeClaim's requirements admit (zone, zone id and capacity type; other keys
/// are the instance type's, already matched).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OfferFilter {
    zones: Option<Requirement>,
    zone_ids: Option<Requirement>,
    capacity_types: Option<Requirement>,
}

impl OfferFilter {
    pub fn of(reqs: &Requirements) -> OfferFilter {
        OfferFilter {
            zones: reqs.get_ref(labels::ZONE).cloned(),
            zone_ids: reqs.get_ref(labels::ZONE_ID).cloned(),
            capacity_types: reqs.get_ref(labels::CAPACITY_TYPE).cloned(),
        }
    }

    pub fn admits(&self, o: &Offering) -> bool {
        self.zones.as_ref().is_none_or(|z| z.has(&o.zone))
            && o.zone_id_admitted(self.zone_ids.as_ref())
            && self
                .capacity_types
                .as_ref()
                .is_none_or(|c| c.has(&o.capacity_type))
    }

    pub fn allows_capacity_type(&self, ct: &str) -> bool {
        self.capacity_types.as_ref().is_none_or(|c| c.has(ct))
    }

    /// Narrows the capacity type to spot (`Requirements.Add(capacity-type In [spot])`).
    pub fn only_spot(&mut self) {
        let spot = Requirement::new(labels::CAPACITY_TYPE, Operator::In, [SPOT.to_string()]);
        self.capacity_types = Some(match &self.capacity_types {
            Some(c) => c.intersection(&spot),
            None => spot,
        });
    }

    fn available<'a>(&'a self, it: &'a InstanceType) -> impl Iterator<Item = &'a Offering> + 'a {
        it.offerings
            .iter()
            .filter(move |o| o.available && self.admits(o))
    }

    /// The cheapest available admitted offering.
    pub fn cheapest<'a>(&self, it: &'a InstanceType) -> Option<&'a Offering> {
        it.offerings
            .iter()
            .filter(|o| o.available && self.admits(o))
            .min_by(|a, b| {
                a.price
                    .total_cmp(&b.price)
                    .then_with(|| a.zone.cmp(&b.zone))
            })
    }

    /// `WorstLaunchPrice`: the most expensive available admitted offering of the capacity type
    /// that would launch — reserved, then spot, then on-demand (v1); before v1 spot, then
    /// on-demand, each only when the requirements allow it.
    pub fn worst_launch_price(&self, it: &InstanceType, release: Release) -> f64 {
        let order: &[&str] = match release {
            Release::V1_14 => &[RESERVED, SPOT, ON_DEMAND],
            Release::V0_37 | Release::V0_31 => &[SPOT, ON_DEMAND],
        };
        for ct in order {
            if !self.allows_capacity_type(ct) {
                continue;
            }
            if let Some(max) = self
                .available(it)
                .filter(|o| o.capacity_type == *ct)
                .map(|o| o.price)
                .max_by(f64::total_cmp)
            {
                return max;
            }
        }
        f64::MAX
    }
}

/// A replacement NodeClaim with its options settled.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    pub pool: usize,
    /// Instance type indices in the pool, cheapest first.
    pub options: Vec<usize>,
    pub filter: OfferFilter,
    /// Index of the simulation's claim.
    pub claim: usize,
    /// The NodeClaim's `minValues` by key: the pool's, or what `MinValuesPolicy: BestEffort`
    /// relaxed them to (`RemoveInstanceTypeOptionsByPriceAndMinValues` checks the replacement's
    /// own requirements).
    pub min_values: Vec<(String, u32)>,
}

impl Choice {
    /// A simulation's NodeClaim as the solver left it (drift and expiration launch them so).
    pub fn from_claim(cluster: &Cluster, claim: &Claim, index: usize) -> Choice {
        let filter = OfferFilter::of(&claim.planned.requirements);
        let mut options: Vec<usize> = claim
            .planned
            .instance_types
            .iter()
            .filter_map(|o| cluster.pools[claim.pool].types.get(&*o.name).copied())
            .collect();
        order_by_price(cluster, claim.pool, &mut options, &filter);
        let planned = &claim.planned;
        let min_values = planned
            .requirements
            .iter()
            .filter_map(|r| r.min_values.map(|m| (r.key.clone(), m)))
            .chain(
                planned
                    .instance_type_requirement
                    .min_values
                    .map(|m| (labels::INSTANCE_TYPE.to_string(), m)),
            )
            .collect();
        Choice {
            pool: claim.pool,
            options,
            filter,
            claim: index,
            min_values,
        }
    }

    fn types<'c>(&'c self, cluster: &'c Cluster) -> impl Iterator<Item = &'c InstanceType> + 'c {
        self.options
            .iter()
            .map(move |&t| &cluster.sched.pools[self.pool].instance_types[t])
    }

    /// The cheapest option and its cheapest offering (what `EstimatedSavings` prices).
    pub fn launch<'c>(&self, cluster: &'c Cluster) -> Option<(&'c InstanceType, &'c Offering)> {
        let it = &cluster.sched.pools[self.pool].instance_types[*self.options.first()?];
        self.filter.cheapest(it).map(|o| (it, o))
    }

    /// Price of the launch, 0 when nothing is available (as `EstimatedSavings` counts it).
    pub fn price(&self, cluster: &Cluster) -> f64 {
        self.launch(cluster).map_or(0.0, |(_, o)| o.price)
    }

    /// What the report shows as launched: the cheapest option with an admitted offering. It is
    /// [`Choice::launch`] unless the first option has none — an on-demand candidate whose
    /// options were narrowed to spot (`consolidation.go computeConsolidation`), the cheapest
    /// of them offered on-demand only — where Karpenter's launch takes the cheapest option it can
    /// (and its `EstimatedSavings` counts that first option at 0, as `price` does).
    fn shown_launch<'c>(&self, cluster: &'c Cluster) -> Option<(&'c InstanceType, &'c Offering)> {
        self.launch(cluster).or_else(|| {
            let types = &cluster.sched.pools[self.pool].instance_types;
            self.options
                .iter()
                .filter_map(|&t| self.filter.cheapest(&types[t]).map(|o| (&types[t], o)))
                .min_by(|a, b| a.1.price.total_cmp(&b.1.price))
        })
    }

    pub fn report(&self, cluster: &Cluster) -> Replacement {
        let launch = self.shown_launch(cluster);
        let zones: BTreeSet<String> = self
            .types(cluster)
            .flat_map(|it| self.filter.available(it).map(|o| o.zone.clone()))
            .collect();
        Replacement {
            node_pool: cluster.pool(self.pool).name.clone(),
            instance_type: launch.map(|(it, _)| it.name.clone()).unwrap_or_default(),
            instance_types: self.types(cluster).map(|it| it.name.clone()).collect(),
            capacity_type: launch
                .map(|(_, o)| o.capacity_type.clone())
                .unwrap_or_default(),
            capacity_reservation_id: launch
                .and_then(|(_, o)| o.reservation.as_ref())
                .map(|r| r.id.clone()),
            zones: zones.into_iter().collect(),
            price_per_hour: launch.map_or(0.0, |(_, o)| o.price),
        }
    }
}

/// `OrderByPrice`: by cheapest available admitted offering; ties by name (Go's sort is not
/// stable).
fn order_by_price(cluster: &Cluster, pool: usize, options: &mut [usize], filter: &OfferFilter) {
    let types = &cluster.sched.pools[pool].instance_types;
    let price = |t: usize| filter.cheapest(&types[t]).map_or(f64::MAX, |o| o.price);
    options.sort_by(|&a, &b| {
        price(a)
            .total_cmp(&price(b))
            .then_with(|| types[a].name.cmp(&types[b].name))
    });
}

/// `SatisfiesMinValues` against the replacement's `minValues`: how many options (from the
/// first) it takes, or which key falls short. No option at all is no shortfall — Karpenter's
/// loop runs over nothing and returns no error, so an empty price filter reads "Can't replace
/// with a cheaper node" (core v1.14.1 `cloudprovider/types.go` `SatisfiesMinValues`,
/// `consolidation.go` `computeConsolidation`; found by the consolidation fuzzer, s33).
fn min_values_needed(cluster: &Cluster, choice: &Choice) -> Result<usize, String> {
    let mins = &choice.min_values;
    if mins.is_empty() || choice.options.is_empty() {
        return Ok(0);
    }
    let types = &cluster.sched.pools[choice.pool].instance_types;
    let mut seen: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); mins.len()];
    for (n, &t) in choice.options.iter().enumerate() {
        for (k, (key, _)) in mins.iter().enumerate() {
            if let Some(r) = types[t].requirements.get_ref(key) {
                seen[k].extend(r.values().iter().map(String::as_str));
            }
        }
        if mins
            .iter()
            .zip(&seen)
            .all(|((_, m), s)| s.len() >= *m as usize)
        {
            return Ok(n + 1);
        }
    }
    let short: Vec<String> = mins
        .iter()
        .zip(&seen)
        .filter(|((_, m), s)| s.len() < *m as usize)
        .map(|((k, m), s)| format!("{k} needs {m}, {} left", s.len()))
        .collect();
    Err(short.join(", "))
}

/// `RemoveInstanceTypeOptionsByPriceAndMinValues` (v1; `filterByPrice` before): keeps options
/// whose worst launch price is below `max_price`, then checks `minValues` (v0.31 has none).
fn below_price(cluster: &Cluster, choice: &mut Choice, max_price: f64) -> Result<(), Reason> {
    let types = &cluster.sched.pools[choice.pool].instance_types;
    let filter = &choice.filter;
    choice
        .options
        .retain(|&t| filter.worst_launch_price(&types[t], cluster.release) < max_price);
    if cluster.release != Release::V0_31 {
        min_values_needed(cluster, choice).map_err(|detail| Reason::MinValues { detail })?;
    }
    Ok(())
}

/// The cheapest option before the price filter, at the price compared, for "not cheaper".
fn not_cheaper(cluster: &Cluster, before: &Choice, price: f64, claim: &Claim) -> Reason {
    let types = &cluster.sched.pools[before.pool].instance_types;
    let cheapest = before
        .options
        .iter()
        .map(|&t| {
            (
                types[t].name.clone(),
                before.filter.worst_launch_price(&types[t], cluster.release),
            )
        })
        .filter(|(_, p)| *p < f64::MAX)
        .min_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let moving: Vec<PodRef> = claim
        .pods
        .iter()
        .copied()
        .filter(|p| !p.is_pending())
        .collect();
    let pods = moving
        .iter()
        .take(3)
        .map(|p| {
            let pod = p.pod(cluster);
            (pod.key(), pod.requests.to_string())
        })
        .collect();
    Reason::NotCheaper {
        pods,
        moving: moving.len(),
        price,
        cheapest,
        held_back: held_back(cluster, &moving),
    }
}

/// The destinations with room for `moving` that their own `consolidateAfter` holds back
/// (core#3225), for the reason text; only worked out when some node is within it.
pub(crate) fn held_back(cluster: &Cluster, moving: &[PodRef]) -> Vec<(String, i64)> {
    let sources: Vec<usize> = moving
        .iter()
        .filter_map(|p| match p {
            PodRef::Bound { node, .. } => Some(*node),
            _ => None,
        })
        .collect();
    let requests = moving
        .iter()
        .fold(Resources::new(), |acc, p| acc.add(&p.pod(cluster).requests));
    cluster.held_back_destinations(&sources, &requests)
}

/// The candidates' summed price (v1: unknown prices count 0; before v1 Karpenter errors).
pub(crate) fn candidates_price(cluster: &Cluster, candidates: &[Candidate]) -> Result<f64, Reason> {
    let mut sum = 0.0;
    for c in candidates {
        match (c.price, cluster.release) {
            (Some(p), _) => sum += p,
            (None, Release::V1_14) => {}
            (None, _) => {
                let (it, zone, ct) = cluster.offering_labels(c.node);
                return Err(Reason::NoOffering {
                    instance_type: it.unwrap_or_default().to_string(),
                    zone: zone.unwrap_or_default().to_string(),
                    capacity_type: ct.unwrap_or_default().to_string(),
                });
            }
        }
    }
    Ok(sum)
}

/// The replacement consolidation would launch for `candidates`, whose pods need the one
/// NodeClaim `claim` (simulation claim `index`), or why there is none.
pub(crate) fn consolidation_replacement(
    cluster: &Cluster,
    candidates: &[Candidate],
    claim: &Claim,
    index: usize,
) -> Result<Choice, Reason> {
    let release = cluster.release;
    let price = candidates_price(cluster, candidates)?;
    let all_spot = candidates
        .iter()
        .all(|c| c.capacity_type.as_deref() == Some(SPOT));
    let mut choice = Choice::from_claim(cluster, claim, index);
    let spot_allowed = choice.filter.allows_capacity_type(SPOT);
    if release == Release::V0_31 {
        let before = choice.clone();
        below_price(cluster, &mut choice, price)?;
        if choice.options.is_empty() {
            return Err(not_cheaper(cluster, &before, price, claim));
        }
        if all_spot && spot_allowed {
            return Err(Reason::SpotToSpotUnsupported);
        }
    } else if all_spot && spot_allowed {
        if !cluster.gates.spot_to_spot_consolidation {
            return Err(Reason::SpotToSpotDisabled);
        }
        choice.filter.only_spot();
        let types = &cluster.sched.pools[choice.pool].instance_types;
        let filter = choice.filter.clone();
        choice
            .options
            .retain(|&t| filter.available(&types[t]).next().is_some());
        let before = choice.clone();
        below_price(cluster, &mut choice, price)?;
        if choice.options.is_empty() {
            return Err(not_cheaper(cluster, &before, price, claim));
        }
        if candidates.len() == 1 {
            if choice.options.len() < SPOT_TO_SPOT_MIN_TYPES {
                return Err(Reason::SpotToSpotTooFew {
                    found: choice.options.len(),
                    needed: SPOT_TO_SPOT_MIN_TYPES,
                });
            }
            // Only the 15 cheapest (or what minValues needs) go to launch, so the node launched
            // is not immediately consolidated again.
            let needed = min_values_needed(cluster, &choice).unwrap_or(0);
            choice.options.truncate(SPOT_TO_SPOT_MIN_TYPES.max(needed));
        }
        return Ok(choice);
    } else {
        let before = choice.clone();
        below_price(cluster, &mut choice, price)?;
        if choice.options.is_empty() {
            return Err(not_cheaper(cluster, &before, price, claim));
        }
    }
    // On-demand → [on-demand, spot], priced as spot: launch spot only, or not at all.
    if choice.filter.allows_capacity_type(SPOT) && choice.filter.allows_capacity_type(ON_DEMAND) {
        choice.filter.only_spot();
    }
    Ok(choice)
}

/// Multi-node: options of a type being removed must cost less than that node, or deleting the
/// others alone would do (`filterOutSameInstanceType`). `None` when nothing is left.
pub(crate) fn without_same_type(
    cluster: &Cluster,
    candidates: &[Candidate],
    mut choice: Choice,
) -> Option<Choice> {
    // Per removed type, its cheapest offering at the node's zone and capacity type; a type with
    // none still counts as removed, at Go's zero price.
    let mut prices: Vec<(&str, Option<f64>)> = Vec::new();
    for c in candidates {
        let Some(t) = c.instance_type else { continue };
        let it = &cluster.sched.pools[c.pool].instance_types[t];
        let (_, zone, ct) = cluster.offering_labels(c.node);
        let cheapest = it
            .offerings
            .iter()
            .filter(|o| zone.is_none_or(|z| z == o.zone) && ct.is_none_or(|c| c == o.capacity_type))
            .map(|o| o.price)
            .min_by(f64::total_cmp);
        match prices.iter_mut().find(|(n, _)| *n == it.name) {
            Some((_, known)) => {
                *known = match (*known, cheapest) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
            None => prices.push((&it.name, cheapest)),
        }
    }
    let types = &cluster.sched.pools[choice.pool].instance_types;
    let max_price = choice
        .options
        .iter()
        .filter_map(|&t| prices.iter().find(|(n, _)| *n == types[t].name))
        .map(|(_, p)| p.unwrap_or(0.0))
        .fold(f64::MAX, f64::min);
    below_price(cluster, &mut choice, max_price).ok()?;
    (!choice.options.is_empty()).then_some(choice)
}
