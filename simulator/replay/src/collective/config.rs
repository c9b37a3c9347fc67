//! `smpi/<collective>` and `smpi/coll-selector` configuration.
//!
//! SimGrid (`colls::set_collectives`, smpi_coll.cpp) resolves, for each collective, the value of
//! `smpi/<coll>` if it is set and non-empty, else the value of `smpi/coll-selector` (default
//! "default"), and dies on a name missing from its table. [`CollectiveConfig::set`] keeps that
//! precedence whatever the order of the options: a per-collective value always wins over the
//! selector.

use super::{
    AllgatherAlgo, AllgathervAlgo, AllreduceAlgo, AlltoallAlgo, AlltoallvAlgo, BarrierAlgo,
    BcastAlgo, GatherAlgo, ReduceAlgo, ReduceScatterAlgo, ScatterAlgo,
};

/// The algorithm of each configurable collective. `Default` is SimGrid 3.32's replay default
/// (every field `::Default`). `gatherv`, `scatterv`, `scan` and `exscan` have no setting in
/// SimGrid.
///
/// Build it with `Default` and [`CollectiveConfig::set`]; the fields may also be assigned
/// directly, but such assignments are not known to be explicit, so a later
/// `smpi/coll-selector` overrides them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CollectiveConfig {
    /// `smpi/barrier`.
    pub barrier: BarrierAlgo,
    /// `smpi/bcast`.
    pub bcast: BcastAlgo,
    /// `smpi/reduce`.
    pub reduce: ReduceAlgo,
    /// `smpi/allreduce`.
    pub allreduce: AllreduceAlgo,
    /// `smpi/alltoall`.
    pub alltoall: AlltoallAlgo,
    /// `smpi/alltoallv`.
    pub alltoallv: AlltoallvAlgo,
    /// `smpi/gather`.
    pub gather: GatherAlgo,
    /// `smpi/scatter`.
    pub scatter: ScatterAlgo,
    /// `smpi/allgather`.
    pub allgather: AllgatherAlgo,
    /// `smpi/allgatherv`.
    pub allgatherv: AllgathervAlgo,
    /// `smpi/reduce_scatter`.
    pub reduce_scatter: ReduceScatterAlgo,
    /// Bit `i` set: collective `i` of [`COLLECTIVES`] was set explicitly, so
    /// `smpi/coll-selector` no longer applies to it.
    pub(super) explicit: u16,
    /// Index in [`SELECTORS`] of the current `smpi/coll-selector`.
    pub(super) selector: u8,
}

/// SimGrid's selector names (valid for every collective in its tables).
const SELECTORS: &[&str] = &["default", "ompi", "mpich", "mvapich2", "impi", "automatic"];

/// The configurable collectives, in `CollectiveConfig` field order: (key suffix, SimGrid 3.32's
/// full list of algorithm names for it, from `smpi_coll_descriptions`).
const COLLECTIVES: &[(&str, &[&str])] = &[
    (
        "barrier",
        &[
            "default",
            "ompi",
            "ompi_basic_linear",
            "ompi_two_procs",
            "ompi_tree",
            "ompi_bruck",
            "ompi_recursivedoubling",
            "ompi_doublering",
            "mpich_smp",
            "mpich",
            "mvapich2_pair",
            "mvapich2",
            "impi",
            "automatic",
        ],
    ),
    (
        "bcast",
        &[
            "default",
            "arrival_pattern_aware",
            "arrival_pattern_aware_wait",
            "arrival_scatter",
            "binomial_tree",
            "flattree",
            "flattree_pipeline",
            "NTSB",
            "NTSL",
            "NTSL_Isend",
            "scatter_LR_allgather",
            "scatter_rdb_allgather",
            "SMP_binary",
            "SMP_binomial",
            "SMP_linear",
            "ompi",
            "ompi_split_bintree",
            "ompi_pipeline",
            "mpich",
            "mvapich2",
            "mvapich2_inter_node",
            "mvapich2_intra_node",
            "mvapich2_knomial_intra_node",
            "impi",
            "automatic",
        ],
    ),
    (
        "reduce",
        &[
            "default",
            "arrival_pattern_aware",
            "binomial",
            "flat_tree",
            "NTSL",
            "scatter_gather",
            "ompi",
            "ompi_chain",
            "ompi_pipeline",
            "ompi_basic_linear",
            "ompi_in_order_binary",
            "ompi_binary",
            "ompi_binomial",
            "mpich",
            "mvapich2",
            "mvapich2_knomial",
            "mvapich2_two_level",
            "impi",
            "rab",
            "automatic",
        ],
    ),
    (
        "allreduce",
        &[
            "default",
            "lr",
            "rab1",
            "rab2",
            "rab_rdb",
            "rdb",
            "smp_binomial",
            "smp_binomial_pipeline",
            "smp_rdb",
            "smp_rsag",
            "smp_rsag_lr",
            "smp_rsag_rab",
            "redbcast",
            "ompi",
            "ompi_ring_segmented",
            "mpich",
            "mvapich2",
            "mvapich2_rs",
            "mvapich2_two_level",
            "impi",
            "rab",
            "automatic",
        ],
    ),
    (
        "alltoall",
        &[
            "default",
            "2dmesh",
            "3dmesh",
            "basic_linear",
            "bruck",
            "pair",
            "pair_rma",
            "pair_light_barrier",
            "pair_mpi_barrier",
            "pair_one_barrier",
            "rdb",
            "ring",
            "ring_light_barrier",
            "ring_mpi_barrier",
            "ring_one_barrier",
            "mvapich2",
            "mvapich2_scatter_dest",
            "ompi",
            "mpich",
            "impi",
            "automatic",
        ],
    ),
    (
        "alltoallv",
        &[
            "default",
            "bruck",
            "pair",
            "pair_light_barrier",
            "pair_mpi_barrier",
            "pair_one_barrier",
            "ring",
            "ring_light_barrier",
            "ring_mpi_barrier",
            "ring_one_barrier",
            "ompi",
            "mpich",
            "ompi_basic_linear",
            "mvapich2",
            "impi",
            "automatic",
        ],
    ),
    (
        "gather",
        &[
            "default",
            "ompi",
            "ompi_basic_linear",
            "ompi_binomial",
            "ompi_linear_sync",
            "mpich",
            "mvapich2",
            "mvapich2_two_level",
            "impi",
            "automatic",
        ],
    ),
    (
        "scatter",
        &[
            "default",
            "ompi",
            "ompi_basic_linear",
            "ompi_linear_nb",
            "ompi_binomial",
            "mpich",
            "mvapich2",
            "mvapich2_two_level_binomial",
            "mvapich2_two_level_direct",
            "impi",
            "automatic",
        ],
    ),
    (
        "allgather",
        &[
            "default",
            "2dmesh",
            "3dmesh",
            "bruck",
            "GB",
            "loosely_lr",
            "NTSLR",
            "NTSLR_NB",
            "pair",
            "rdb",
            "rhv",
            "ring",
            "SMP_NTS",
            "smp_simple",
            "spreading_simple",
            "ompi",
            "ompi_neighborexchange",
            "mvapich2",
            "mvapich2_smp",
            "mpich",
            "impi",
            "automatic",
        ],
    ),
    (
        "allgatherv",
        &[
            "default",
            "GB",
            "pair",
            "ring",
            "ompi",
            "ompi_neighborexchange",
            "ompi_bruck",
            "mpich",
            "mpich_rdb",
            "mpich_ring",
            "mvapich2",
            "impi",
            "automatic",
        ],
    ),
    (
        "reduce_scatter",
        &[
            "default",
            "ompi",
            "ompi_basic_recursivehalving",
            "ompi_ring",
            "ompi_butterfly",
            "mpich",
            "mpich_pair",
            "mpich_rdb",
            "mpich_noncomm",
            "mvapich2",
            "impi",
            "automatic",
        ],
    ),
];

/// Names timeless implements for collective `i` of [`COLLECTIVES`].
fn implemented(i: usize) -> Vec<&'static str> {
    fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
        all.iter().map(|&a| name(a)).collect()
    }
    match i {
        0 => names(BarrierAlgo::ALL, BarrierAlgo::name),
        1 => names(BcastAlgo::ALL, BcastAlgo::name),
        2 => names(ReduceAlgo::ALL, ReduceAlgo::name),
        3 => names(AllreduceAlgo::ALL, AllreduceAlgo::name),
        4 => names(AlltoallAlgo::ALL, AlltoallAlgo::name),
        5 => names(AlltoallvAlgo::ALL, AlltoallvAlgo::name),
        6 => names(GatherAlgo::ALL, GatherAlgo::name),
        7 => names(ScatterAlgo::ALL, ScatterAlgo::name),
        8 => names(AllgatherAlgo::ALL, AllgatherAlgo::name),
        9 => names(AllgathervAlgo::ALL, AllgathervAlgo::name),
        10 => names(ReduceScatterAlgo::ALL, ReduceScatterAlgo::name),
        _ => unreachable!("{} collectives", COLLECTIVES.len()),
    }
}

impl CollectiveConfig {
    /// Applies one `--cfg=key:value` option. Returns `Ok(false)` when `key` is not a collective
    /// key (`smpi/<coll>` or `smpi/coll-selector`), `Ok(true)` when it was applied, and an error
    /// naming the valid algorithms when `value` is not one timeless implements. An empty value
    /// for `smpi/<coll>` reverts that collective to the selector, as in SimGrid. On error the
    /// configuration is unchanged.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let Some(suffix) = key.strip_prefix("smpi/") else {
            return Ok(false);
        };
        if suffix == "coll-selector" {
            return self.set_selector(value).map(|()| true);
        }
        let Some(index) = COLLECTIVES.iter().position(|&(name, _)| name == suffix) else {
            return Ok(false);
        };
        if value.is_empty() {
            let selector = SELECTORS[usize::from(self.selector)];
            let mut next = *self;
            if !next.set_one(index, selector) {
                return Err(unknown_algorithm(index, selector));
            }
            next.explicit &= !(1 << index);
            *self = next;
            return Ok(true);
        }
        if !self.set_one(index, value) {
            return Err(unknown_algorithm(index, value));
        }
        self.explicit |= 1 << index;
        Ok(true)
    }

    /// `smpi/coll-selector`: every collective not set explicitly takes the algorithm of that
    /// name ("" means "default").
    fn set_selector(&mut self, value: &str) -> Result<(), String> {
        let value = if value.is_empty() { "default" } else { value };
        let Some(selector) = SELECTORS.iter().position(|&s| s == value) else {
            return Err(format!(
                "smpi/coll-selector has no value '{value}'; SimGrid 3.32's selectors are: {}",
                SELECTORS.join(", ")
            ));
        };
        let mut next = *self;
        next.selector = selector as u8;
        let mut missing = Vec::new();
        for (index, &(name, _)) in COLLECTIVES.iter().enumerate() {
            if self.explicit & (1 << index) != 0 {
                continue;
            }
            if !next.set_one(index, value) {
                missing.push(name);
            }
        }
        if !missing.is_empty() {
            return Err(format!(
                "smpi/coll-selector:{value} is not supported by timeless for: {} (set these \
                 collectives explicitly with smpi/<collective>:<algorithm>)",
                missing.join(", ")
            ));
        }
        *self = next;
        Ok(())
    }

    /// Sets collective `index` to the algorithm named `value`; false if timeless lacks it.
    fn set_one(&mut self, index: usize, value: &str) -> bool {
        fn put<T>(slot: &mut T, parsed: Option<T>) -> bool {
            parsed.map(|algo| *slot = algo).is_some()
        }
        match index {
            0 => put(&mut self.barrier, BarrierAlgo::from_name(value)),
            1 => put(&mut self.bcast, BcastAlgo::from_name(value)),
            2 => put(&mut self.reduce, ReduceAlgo::from_name(value)),
            3 => put(&mut self.allreduce, AllreduceAlgo::from_name(value)),
            4 => put(&mut self.alltoall, AlltoallAlgo::from_name(value)),
            5 => put(&mut self.alltoallv, AlltoallvAlgo::from_name(value)),
            6 => put(&mut self.gather, GatherAlgo::from_name(value)),
            7 => put(&mut self.scatter, ScatterAlgo::from_name(value)),
            8 => put(&mut self.allgather, AllgatherAlgo::from_name(value)),
            9 => put(&mut self.allgatherv, AllgathervAlgo::from_name(value)),
            10 => put(
                &mut self.reduce_scatter,
                ReduceScatterAlgo::from_name(value),
            ),
            _ => unreachable!("{} collectives", COLLECTIVES.len()),
        }
    }
}

/// The error message for an algorithm name timeless does not implement.
fn unknown_algorithm(index: usize, value: &str) -> String {
    let (name, simgrid) = COLLECTIVES[index];
    let ours = implemented(index);
    let mut msg = if simgrid.contains(&value) {
        format!("collective '{name}': SimGrid's algorithm '{value}' is not implemented by timeless")
    } else {
        format!("collective '{name}' has no algorithm '{value}'")
    };
    msg.push_str(&format!("; valid algorithms: {}", ours.join(", ")));
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_simgrid_default() {
        let cfg = CollectiveConfig::default();
        assert_eq!(cfg.bcast, BcastAlgo::Default);
        assert_eq!(cfg.alltoall, AlltoallAlgo::Default);
        assert_eq!(cfg.barrier, BarrierAlgo::Default);
    }

    #[test]
    fn set_keys() {
        let mut cfg = CollectiveConfig::default();
        assert_eq!(cfg.set("smpi/bcast", "scatter_LR_allgather"), Ok(true));
        assert_eq!(cfg.bcast, BcastAlgo::ScatterLrAllgather);
        assert_eq!(cfg.set("smpi/reduce_scatter", "mpich_pair"), Ok(true));
        assert_eq!(cfg.reduce_scatter, ReduceScatterAlgo::MpichPair);
        assert_eq!(cfg.set("smpi/os", "0:0:0"), Ok(false));
        assert_eq!(cfg.set("network/model", "SMPI"), Ok(false));
        let err = cfg.set("smpi/bcast", "binomial").unwrap_err();
        assert!(
            err.contains("binomial_tree") && err.contains("no algorithm"),
            "{err}"
        );
        let err = cfg.set("smpi/bcast", "NTSL").unwrap_err();
        assert!(err.contains("not implemented"), "{err}");
        // Case-sensitive, as SimGrid.
        assert!(cfg.set("smpi/allgather", "gb").is_err());
        assert_eq!(cfg.set("smpi/allgather", "GB"), Ok(true));
        // Unchanged after an error.
        assert_eq!(cfg.bcast, BcastAlgo::ScatterLrAllgather);
    }

    #[test]
    fn selector_precedence() {
        let mut cfg = CollectiveConfig::default();
        cfg.set("smpi/alltoall", "ring").unwrap();
        // ompi is missing for bcast, reduce, allreduce, gather and reduce_scatter.
        let err = cfg.set("smpi/coll-selector", "ompi").unwrap_err();
        assert!(err.contains("bcast") && err.contains("gather"), "{err}");
        assert_eq!(cfg.barrier, BarrierAlgo::Default);
        for (key, value) in [
            ("smpi/bcast", "binomial_tree"),
            ("smpi/reduce", "binomial"),
            ("smpi/allreduce", "rdb"),
            ("smpi/gather", "ompi_binomial"),
            ("smpi/reduce_scatter", "ompi_butterfly"),
        ] {
            cfg.set(key, value).unwrap();
        }
        assert_eq!(cfg.set("smpi/coll-selector", "ompi"), Ok(true));
        assert_eq!(cfg.barrier, BarrierAlgo::Ompi);
        assert_eq!(cfg.scatter, ScatterAlgo::Ompi);
        assert_eq!(cfg.alltoall, AlltoallAlgo::Ring, "explicit setting wins");
        cfg.set("smpi/alltoall", "").unwrap();
        cfg.set("smpi/coll-selector", "ompi").unwrap();
        assert_eq!(cfg.alltoall, AlltoallAlgo::Ompi);
    }

    #[test]
    fn names_round_trip_and_exist_in_simgrid() {
        for (index, &(coll, simgrid)) in COLLECTIVES.iter().enumerate() {
            for name in implemented(index) {
                assert!(simgrid.contains(&name), "{name}");
                let mut cfg = CollectiveConfig::default();
                let key = format!("smpi/{coll}");
                assert_eq!(cfg.set(&key, name), Ok(true), "{key}:{name}");
            }
        }
    }
}
