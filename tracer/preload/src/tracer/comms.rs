//! The communicators a rank uses, as the tracer knows them: their world ranks, their small
//! per-rank ids, and the `comm_def` records that describe them.
//!
//! Every record names peers and roots by their rank in `MPI_COMM_WORLD`.
//!
//! # Communicators (timeless's extension of the TI format)
//!
//! Each communicator gets a small per-rank id in order of creation or first use, 0 being
//! `MPI_COMM_WORLD`. Every other intracommunicator is described once, by a record
//! `<r> comm_def <id> <size> <w_0> … <w_size-1>` (comm rank i is world rank w_i), written
//! when it is created or, for communicators the tracer did not see created (`MPI_COMM_SELF`,
//! results of untraced calls), before its first use. Every point-to-point, `wait`/`test` and
//! collective record on it ends with ` comm=<id>`. Ranks identify a communicator across files
//! by its ordered member list and the occurrence index of that list among their own
//! `comm_def`s. A program that only uses `MPI_COMM_WORLD` writes neither, so its trace stays
//! replayable by SimGrid 3.32 as is. Intercommunicators are not described: point-to-point on
//! them is written in world ranks after a `# comm <id> (intercommunicator)` comment, and their

use std::ffi::c_int;
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{Counts, Fail, Tracer};
use crate::mpi::{self, handle_key, MPI_Comm, MPI_Group};
use crate::record::Record;

/// A communicator as the tracer knows it.
#[derive(Debug, Clone)]
pub struct CommInfo {
    /// Small per-rank id in order of first use: 0 is `MPI_COMM_WORLD`.
    pub id: u32,
    /// World rank of each peer rank (the remote group of an intercommunicator).
    pub peers: Arc<[u32]>,
    /// `MPI_COMM_WORLD` itself (a duplicate of it is another communicator).
    pub is_world: bool,
    pub is_inter: bool,
    /// Whether its `comm_def` record (or intercommunicator note) is written.
    pub defined: bool,
}

impl CommInfo {
    /// The id written in `comm=<id>` fields: `None` for `MPI_COMM_WORLD`.
    pub fn field(&self) -> Option<u32> {
        (!self.is_world).then_some(self.id)
    }
}

/// ` comm=<id>` after a record on a communicator other than the world, nothing otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommField(pub Option<u32>);

impl fmt::Display for CommField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(id) => write!(f, " comm={id}"),
            None => Ok(()),
        }
    }
}

/// Communicators by handle, built lazily from their groups. `MPI_COMM_WORLD`, which most
/// calls use, is kept apart: finding it is one comparison instead of a hash lookup.
pub struct CommTable {
    map: FxHashMap<u64, CommInfo>,
    world_key: u64,
    world: Option<CommInfo>,
    next_id: u32,
    world_group: MPI_Group,
}

impl CommTable {
    pub fn new(world_group: MPI_Group) -> CommTable {
        CommTable {
            map: FxHashMap::default(),
            world_key: handle_key(mpi::comm_world()),
            world: None,
            next_id: 0,
            world_group,
        }
    }

    /// The communicator's description; `comm` must be a valid handle. A communicator seen for
    /// the first time gets the next id (see [`Tracer::comm`], which also writes its
    /// `comm_def`).
    pub fn get(&mut self, comm: MPI_Comm) -> Result<&CommInfo, Fail> {
        let key = handle_key(comm);
        if key == self.world_key {
            if self.world.is_none() {
                self.world = Some(self.describe(comm)?);
            }
            return self
                .world
                .as_ref()
                .ok_or_else(|| Fail::new("MPI_COMM_WORLD not described"));
        }
        if !self.map.contains_key(&key) {
            let info = self.describe(comm)?;
            self.map.insert(key, info);
        }
        Ok(&self.map[&key])
    }

    /// Describes `MPI_COMM_WORLD` as communicator 0 of `size` ranks without asking the library
    /// (a sessions program may not touch it: its world model is not initialised).
    pub fn reserve_world(&mut self, size: u32) {
        if self.world.is_none() {
            self.world = Some(CommInfo {
                id: self.next_id,
                peers: (0..size).collect(),
                is_world: true,
                is_inter: false,
                defined: true,
            });
            self.next_id += 1;
        }
    }

    /// Registers `newcomm` as a new communicator with `parent`'s members (`MPI_Comm_idup`,
    /// whose result may not be used, hence not described, before the request completes).
    pub fn add_copy(&mut self, newcomm: MPI_Comm, parent: MPI_Comm) -> Result<(), Fail> {
        let p = self.get(parent)?.clone();
        let id = self.next_id;
        self.next_id += 1;
        self.map.insert(
            handle_key(newcomm),
            CommInfo {
                id,
                peers: p.peers,
                is_world: false,
                is_inter: p.is_inter,
                defined: false,
            },
        );
        Ok(())
    }

    /// Records that the communicator's `comm_def` is written.
    pub fn mark_defined(&mut self, comm: MPI_Comm) {
        if let Some(info) = self.map.get_mut(&handle_key(comm)) {
            info.defined = true;
        }
    }

    /// Forgets a freed communicator (its handle may be reused).
    pub fn forget(&mut self, comm: MPI_Comm) -> Option<CommInfo> {
        self.map.remove(&handle_key(comm))
    }

    fn describe(&mut self, comm: MPI_Comm) -> Result<CommInfo, Fail> {
        let fail = |what: &str| Fail::new(format!("cannot describe a communicator: {what} failed"));
        let mut inter: c_int = 0;
        let mut group = unsafe { std::mem::zeroed::<MPI_Group>() };
        // SAFETY: `comm` is a valid communicator of a successful call; out-params are locals.
        unsafe {
            if mpi_sys::PMPI_Comm_test_inter(comm, &mut inter) != mpi::SUCCESS {
                return Err(fail("MPI_Comm_test_inter"));
            }
            let rc = if inter != 0 {
                mpi_sys::PMPI_Comm_remote_group(comm, &mut group)
            } else {
                mpi_sys::PMPI_Comm_group(comm, &mut group)
            };
            if rc != mpi::SUCCESS {
                return Err(fail("MPI_Comm_group"));
            }
        }
        let mut n: c_int = 0;
        // SAFETY: valid group; locals.
        unsafe { mpi_sys::PMPI_Group_size(group, &mut n) };
        let local: Vec<c_int> = (0..n).collect();
        let mut world = vec![0 as c_int; n as usize];
        // SAFETY: arrays of `n` ints; valid groups.
        let rc = unsafe {
            mpi_sys::PMPI_Group_translate_ranks(
                group,
                n,
                local.as_ptr(),
                self.world_group,
                world.as_mut_ptr(),
            )
        };
        // SAFETY: frees the group this function created.
        unsafe { mpi_sys::PMPI_Group_free(&mut group) };
        if rc != mpi::SUCCESS || world.iter().any(|&w| w < 0) {
            return Err(fail("MPI_Group_translate_ranks"));
        }
        let peers: Arc<[u32]> = world.iter().map(|&w| w as u32).collect();
        let is_world = handle_key(comm) == handle_key(mpi::comm_world());
        let id = self.next_id;
        self.next_id += 1;
        Ok(CommInfo {
            id,
            peers,
            is_world,
            is_inter: inter != 0,
            defined: is_world,
        })
    }
}

impl Tracer {
    /// World rank of peer `r` of `comm`; `None` for `MPI_PROC_NULL`.
    pub fn peer(&mut self, comm: MPI_Comm, r: c_int) -> Result<Option<u32>, Fail> {
        if r == mpi::proc_null() {
            return Ok(None);
        }
        let info = self.comms.get(comm)?;
        info.peers
            .get(r as usize)
            .copied()
            .map(Some)
            .ok_or_else(|| Fail::new(format!("rank {r} out of range in communicator {}", info.id)))
    }

    /// The communicator's description. The first time a communicator other than the world is
    /// met, its `comm_def` record is written (a comment for an intercommunicator).
    pub fn comm(&mut self, comm: MPI_Comm) -> Result<CommInfo, Fail> {
        let info = self.comms.get(comm)?.clone();
        if info.defined {
            return Ok(info);
        }
        if info.is_inter {
            self.note(format_args!(
                "comm {} (intercommunicator) with remote group world ranks {}",
                info.id,
                Counts(&info.peers.iter().map(|&w| u64::from(w)).collect::<Vec<_>>())
            ))?;
        } else {
            self.rec_no_site(format_args!(
                "comm_def {} {} {}",
                info.id,
                info.peers.len(),
                Counts(&info.peers.iter().map(|&w| u64::from(w)).collect::<Vec<_>>())
            ))?;
        }
        self.comms.mark_defined(comm);
        if let Some(p) = &mut self.profile {
            p.defined(info.id, &info.peers);
        }
        Ok(info)
    }

    /// The `comm=<id>` field of records on `comm` (`None` for the world), after its
    /// `comm_def`.
    pub fn comm_field(&mut self, comm: MPI_Comm) -> Result<Option<u32>, Fail> {
        let info = self.comms.get(comm)?;
        if info.defined {
            return Ok(if info.is_inter { None } else { info.field() });
        }
        let info = self.comm(comm)?;
        Ok(if info.is_inter { None } else { info.field() })
    }

    /// Writes the record of a point-to-point, completion or collective action on `comm`:
    /// `"<rank> <args>"`, followed by ` comm=<id>` on a communicator other than the world.
    pub fn on(&mut self, comm: MPI_Comm, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        let info = self.comm(comm)?;
        if info.is_inter {
            self.note(format_args!("comm {} (intercommunicator)", info.id))?;
            return self.rec(args);
        }
        self.rec(format_args!("{args}{}", CommField(info.field())))
    }

    /// Writes a typed record (see `record`) on `comm`, as [`Tracer::on`] writes its text.
    pub fn on_record(&mut self, comm: MPI_Comm, record: Record) -> Result<(), Fail> {
        let info = self.comms.get(comm)?;
        let (defined, is_inter, id, field) = (info.defined, info.is_inter, info.id, info.field());
        if !defined {
            self.comm(comm)?;
        }
        if is_inter {
            self.note(format_args!("comm {id} (intercommunicator)"))?;
            return self.rec_record(record, None);
        }
        self.rec_record(record, field)
    }

    /// Root of a rooted collective as a world rank.
    pub fn root(&mut self, comm: MPI_Comm, root: c_int) -> Result<u32, Fail> {
        Ok(self.peer(comm, root)?.unwrap_or(0))
    }

    /// Rank of this process in `comm`.
    pub fn local_rank(&self, comm: MPI_Comm) -> Result<c_int, Fail> {
        mpi::rank_size(comm)
            .map(|(r, _)| r)
            .ok_or_else(|| Fail::new("MPI_Comm_rank failed"))
    }

    /// Size of `comm` (remote size is not handled: collectives on intercommunicators are noted).
    pub fn comm_size(&self, comm: MPI_Comm) -> Result<usize, Fail> {
        mpi::rank_size(comm)
            .map(|(_, s)| s as usize)
            .ok_or_else(|| Fail::new("MPI_Comm_size failed"))
    }
}
