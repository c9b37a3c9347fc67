//! Per-rank tracer state: the trace writer, the compute-burst clock, the communicators and
//! datatypes seen so far, and the requests not completed yet.
//!
//! Every record names peers and roots by their rank in `MPI_COMM_WORLD`. Element counts are
//! kept in the program's datatype when it is a predefined one SimGrid 3.32 knows (its id is
//! written), and converted to bytes (id 6, `MPI_BYTE`) otherwise: count × `MPI_Type_size`.
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
//! collectives as comments.

use std::collections::{HashMap, VecDeque};
use std::ffi::c_int;
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use timeless_trace::Datatype;

use crate::burst::{BurstCarry, BurstRule, SiteState};
use crate::clock::thread_cpu_chained_secs;
use crate::mpi::{self, handle_key, MPI_Comm, MPI_Datatype, MPI_Group, MPI_Request, MPI_Status};
use crate::record::{Record, RecordKey};
use crate::stamps::Stamped;
use crate::writer::{HoleId, Writer};
use std::any::TypeId;

/// An internal failure: tracing stops, the program does not.
#[derive(Debug)]
pub struct Fail(String);

impl Fail {
    pub fn new(msg: impl Into<String>) -> Fail {
        Fail(msg.into())
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Fail {
        Fail(format!("trace write failed: {e}"))
    }
}

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

/// ` @cs=<id>` after an action record of a call whose site is recorded (see `callsite`),
/// nothing otherwise.
pub struct SiteField(pub Option<u32>);

impl fmt::Display for SiteField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(id) => write!(f, " {}{id}", timeless_trace::parse::CALLSITE_FIELD),
            None => Ok(()),
        }
    }
}

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

/// A request the tracer waits to see completed.
#[derive(Debug, Clone)]
pub enum Pending {
    /// From `isend` (and its modes): completes as `wait me dst tag`.
    Send {
        dst: u32,
        tag: i32,
        comm: Option<u32>,
    },
    /// From `irecv`. A wildcard source or tag is `None` until completion; its record is then
    /// a hole in the writer.
    Recv {
        src: Option<u32>,
        tag: Option<i32>,
        /// World rank of each member of the communicator, kept for a wildcard source only
        /// (its completion names the sender).
        peers: Option<Arc<[u32]>>,
        comm: Option<u32>,
        count: u64,
        dt: u8,
        hole: Option<HoleId>,
    },
    /// A nonblocking collective, recorded when posted: its completion records nothing.
    Collective,
}

/// Pending requests by handle, each handle's oldest first. Handles are not unique (Open MPI
/// returns one shared, already complete request for every send that completed at once), but
/// a handle almost always has one request: it is kept inline in `first`, and only the others
/// in a queue, so tracking a request allocates nothing.
#[derive(Default)]
struct Requests {
    first: FxHashMap<u64, Pending>,
    more: FxHashMap<u64, VecDeque<Pending>>,
}

impl Requests {
    fn push(&mut self, key: u64, p: Pending) {
        use std::collections::hash_map::Entry;
        match self.first.entry(key) {
            Entry::Vacant(v) => {
                v.insert(p);
            }
            Entry::Occupied(_) => self.more.entry(key).or_default().push_back(p),
        }
    }

    /// Removes and returns the oldest request of `key`.
    fn pop(&mut self, key: u64) -> Option<Pending> {
        let p = self.first.remove(&key)?;
        if let Some(q) = self.more.get_mut(&key) {
            if let Some(next) = q.pop_front() {
                self.first.insert(key, next);
            }
            if q.is_empty() {
                self.more.remove(&key);
            }
        }
        Some(p)
    }

    fn front(&self, key: u64) -> Option<&Pending> {
        self.first.get(&key)
    }

    fn iter(&self) -> impl Iterator<Item = &Pending> {
        self.first.values().chain(self.more.values().flatten())
    }
}

/// A persistent request (`MPI_Send_init`, `MPI_Recv_init`...): what each `MPI_Start` of it
/// posts, recorded as an `isend` or `irecv`.
#[derive(Debug, Clone)]
pub enum Persistent {
    Send {
        dst: u32,
        tag: i32,
        count: u64,
        dt: u8,
        comm: Option<u32>,
    },
    Recv {
        src: Option<u32>,
        tag: Option<i32>,
        peers: Arc<[u32]>,
        count: u64,
        dt: u8,
        comm: Option<u32>,
    },
    /// With `MPI_PROC_NULL` as peer: starting it records nothing.
    Null,
}

/// A message matched by a probe: its sender (world rank), tag and communicator field.
#[derive(Debug, Clone, Copy)]
pub struct Matched {
    pub src: u32,
    pub tag: i32,
    pub comm: Option<u32>,
}

/// What a SimGrid `wait`/`test` names: `src dst tag` (world ranks), and the communicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitKey {
    pub src: u32,
    pub dst: u32,
    pub tag: i32,
    pub comm: Option<u32>,
}

impl fmt::Display for WaitKey {
    /// `src dst tag[ comm=<id>]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}{}",
            self.src,
            self.dst,
            self.tag,
            CommField(self.comm)
        )
    }
}

/// Predefined datatypes SimGrid 3.32 knows, by handle.
pub struct TypeTable {
    ids: FxHashMap<u64, u8>,
}

/// Fortran and alias names mapped onto an id of the same size (only sizes matter in replay).
const ALIASES: &[(&str, &str)] = &[
    ("MPI_LONG_LONG_INT", "MPI_LONG_LONG"),
    ("MPI_C_COMPLEX", "MPI_C_FLOAT_COMPLEX"),
    ("MPI_CHARACTER", "MPI_CHAR"),
    ("MPI_LOGICAL", "MPI_INTEGER4"),
    ("MPI_INTEGER", "MPI_INTEGER4"),
    ("MPI_DOUBLE_PRECISION", "MPI_REAL8"),
    ("MPI_COMPLEX", "MPI_COMPLEX8"),
    ("MPI_DOUBLE_COMPLEX", "MPI_COMPLEX16"),
    ("MPI_2REAL", "MPI_2FLOAT"),
    ("MPI_2DOUBLE_PRECISION", "MPI_2DOUBLE"),
    ("MPI_2INTEGER", "MPI_2INT"),
];

impl TypeTable {
    /// Maps each predefined type of the library to a SimGrid id of the same name (or alias)
    /// whose size SimGrid agrees with; any other type is written in bytes.
    pub fn from_library() -> TypeTable {
        let mut by_name: HashMap<&'static str, u8> = HashMap::new();
        for id in 0..Datatype::count() {
            let d = Datatype(id as u8);
            by_name.insert(d.name(), d.0);
        }
        let mut ids = FxHashMap::default();
        for t in mpi::predefined_types() {
            // SAFETY: the shim's names are static NUL-terminated strings.
            let name = unsafe { std::ffi::CStr::from_ptr(t.name) }.to_string_lossy();
            let target = ALIASES
                .iter()
                .find(|(a, _)| *a == name)
                .map(|(_, b)| *b)
                .unwrap_or(&name);
            let Some(&id) = by_name.get(target) else {
                continue;
            };
            if mpi::type_size(t.handle) == Some(u64::from(Datatype(id).size_bytes())) {
                ids.entry(handle_key(t.handle)).or_insert(id);
            }
        }
        TypeTable { ids }
    }

    pub fn simgrid_id(&self, dt: MPI_Datatype) -> Option<u8> {
        self.ids.get(&handle_key(dt)).copied()
    }
}

/// The datatype id written for bytes.
pub const BYTE_ID: u8 = 6;

/// Space-separated counts.
pub struct Counts<'a>(pub &'a [u64]);

impl fmt::Display for Counts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// Settings read from the environment at start-up.
#[derive(Debug, Clone)]
pub struct Settings {
    /// When a burst is written rather than carried over (CPU seconds, see `burst`).
    pub burst_rule: BurstRule,
    /// Test hook: panic when this many records have been written.
    pub inject_panic_at: Option<u64>,
    /// Buffered lines older than this (wall seconds) are written out, at the end of a traced
    /// call or by the flusher thread (`runtime`); 0: only when the buffer fills.
    pub flush_secs: f64,
}

/// Bursts measured with the instruction counter (`counters`): what is pending besides
/// `pending`, which still decides when a burst is written (CPU time, see `burst`).
#[derive(Debug, Clone)]
struct Counted {
    /// Reference flops per instruction (the kernel's).
    flops_per_instruction: f64,
    /// Counter reading when the tracer last handed control back to the program.
    last_exit: Option<crate::counters::Reading>,
    /// Instructions of compute not written yet.
    pending_instructions: u64,
    /// CPU seconds of compute not written yet whose interval had no counter reading (a thread
    /// without counter, or an interval across threads): converted with the reference speed.
    pending_uncounted_cpu: f64,
    /// Intervals measured in instructions, and with CPU time instead.
    counted_intervals: u64,
    uncounted_intervals: u64,
}

/// One rank's tracer.
pub struct Tracer {
    rank: u32,
    size: u32,
    out: Writer,
    /// Reference speed in flop/s.
    speed: f64,
    /// Thread CPU time when the tracer last handed control back to the program.
    last_exit: f64,
    /// Compute not written yet (carried over, and the current burst; see `burst`).
    pending: BurstCarry,
    /// Per call site (hook of the call that wrote the last record, hook of the call writing
    /// the next one): what it did with its last gap (`burst`'s hysteresis).
    sites: FxHashMap<(TypeId, TypeId), SiteState>,
    /// Hook of the call that wrote the last record, and of the call being traced.
    last_record_call: TypeId,
    current_call: TypeId,
    /// Compute measured in instructions, when hardware counters are used (see `counters`).
    counted: Option<Counted>,
    settings: Settings,
    pub comms: CommTable,
    pub types: TypeTable,
    /// Pending requests by handle. Handles are not unique: Open MPI returns one shared,
    /// already complete request for every send that completed at once, so each handle keeps a
    /// queue, oldest first.
    reqs: Requests,
    /// Persistent requests by handle, from their creation to `MPI_Request_free`.
    persistent: FxHashMap<u64, Persistent>,
    /// Messages matched by `MPI_Mprobe`/`MPI_Improbe` and not received yet, by handle.
    messages: FxHashMap<u64, Matched>,
    records: u64,
    closed: bool,
    /// Wall-clock time (`CLOCK_MONOTONIC`, seconds) of the last periodic flush.
    last_flush_wall: f64,
    /// The clock note is written (see [`Tracer::clock_note`]).
    clock_noted: bool,
    /// The timestamped copy of the records (`TIMELESS_TIMESTAMPS`, see `stamps`).
    stamped: Option<Stamped>,
    /// The communicator-centric profile (`TIMELESS_PROFILE`, see `profile`).
    pub profile: Option<crate::profile::Capture>,
    /// Call sites, when recorded (`TIMELESS_CALLSITES`, see `callsite`).
    pub callsites: Option<crate::callsite::CallSites>,
    /// Call site of the call being traced (its action records end with `@cs=<id>`).
    callsite: Option<u32>,
    /// Call sites of the wildcard `irecv`s whose hole is not filled yet.
    hole_sites: FxHashMap<HoleId, u32>,
}

// SAFETY: the tracer holds MPI handles (plain identifiers, pointers under Open MPI) and raw
// pointers to nothing else; it is only used under the runtime's mutex, from threads the MPI
// library allows to make MPI calls.
unsafe impl Send for Tracer {}

impl Tracer {
    pub fn new(
        rank: u32,
        size: u32,
        out: Writer,
        speed: f64,
        settings: Settings,
        comms: CommTable,
    ) -> Tracer {
        Tracer {
            rank,
            size,
            out,
            speed,
            last_exit: thread_cpu_chained_secs(),
            pending: BurstCarry::default(),
            sites: FxHashMap::default(),
            last_record_call: TypeId::of::<()>(),
            current_call: TypeId::of::<()>(),
            counted: None,
            settings,
            comms,
            types: TypeTable::from_library(),
            reqs: Requests::default(),
            persistent: FxHashMap::default(),
            messages: FxHashMap::default(),
            records: 0,
            closed: false,
            last_flush_wall: crate::clock::wall_secs(),
            clock_noted: false,
            stamped: None,
            profile: None,
            callsites: None,
            callsite: None,
            hole_sites: FxHashMap::default(),
        }
    }

    /// Takes the call site of the MPI call being traced, when call sites are recorded.
    pub fn capture_callsite(&mut self) {
        self.callsite = self.callsites.as_mut().and_then(|c| c.here());
    }

    /// Measures the bursts from now on in instructions, converted with `flops_per_instruction`
    /// (the reference kernel's, see `counters`); the counters must be active.
    pub fn count_instructions(&mut self, flops_per_instruction: f64) {
        self.counted = Some(Counted {
            flops_per_instruction,
            last_exit: crate::counters::thread_instructions(),
            pending_instructions: 0,
            pending_uncounted_cpu: 0.0,
            counted_intervals: 0,
            uncounted_intervals: 0,
        });
    }

    /// Also writes every record, timestamped, to `stamped`.
    pub fn set_stamped(&mut self, stamped: Stamped) {
        self.stamped = Some(stamped);
    }

    /// The call whose records follow ran from `enter` to `exit` (wall seconds).
    pub fn set_call(&mut self, enter: f64, exit: f64) {
        if let Some(s) = &mut self.stamped {
            s.set_call(enter, exit);
        }
    }

    /// Writes a record to the timestamped file only (what the TI trace keeps as a comment).
    pub fn stamped_only(&mut self, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        let rank = self.rank;
        if let Some(s) = &mut self.stamped {
            s.line(rank, args)?;
        }
        Ok(())
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Appends `"<rank> <args>"`, after the compute burst that precedes it.
    pub fn rec(&mut self, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        if crate::profile::only() {
            // The profile is all that is kept: no compute records, no trace line.
            if let Some(p) = &mut self.profile {
                p.record(args);
            }
            return Ok(());
        }
        self.flush_compute()?;
        self.action(args, self.callsite)
    }

    /// As [`Tracer::rec`], without a call site (definitions such as `comm_def`).
    fn rec_no_site(&mut self, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        if crate::profile::only() {
            if let Some(p) = &mut self.profile {
                p.record(args);
            }
            return Ok(());
        }
        self.flush_compute()?;
        self.action(args, None)
    }

    fn action(&mut self, args: fmt::Arguments<'_>, site: Option<u32>) -> Result<(), Fail> {
        self.stamped_only(args)?;
        self.untimed_action(args, site, None, None)
    }

    /// Writes a typed record (see `record`) on communicator field `comm`, after the compute
    /// burst that precedes it; its text is what [`Tracer::rec`] would write.
    pub fn rec_record(&mut self, record: Record, comm: Option<u32>) -> Result<(), Fail> {
        let args = format_args!("{record}{}", CommField(comm));
        if crate::profile::only() {
            if let Some(p) = &mut self.profile {
                p.record(args);
            }
            return Ok(());
        }
        self.flush_compute()?;
        self.stamped_only(args)?;
        let key = RecordKey {
            record,
            comm,
            site: self.callsite,
        };
        self.untimed_action(args, key.site, Some(&key), None)
    }

    /// A record of the TI trace only (compute bursts: the gaps of the timestamped file),
    /// ending with the call site `site` if any; `key` is its typed key (see `record`) and
    /// `volume` a `compute` record's flops.
    fn untimed_action(
        &mut self,
        args: fmt::Arguments<'_>,
        site: Option<u32>,
        key: Option<&RecordKey>,
        volume: Option<f64>,
    ) -> Result<(), Fail> {
        self.count_record();
        let rank = self.rank;
        self.out.record(
            key,
            volume,
            format_args!("{rank} {args}{}", SiteField(site)),
        )?;
        if let Some(p) = &mut self.profile {
            p.record(args);
        }
        Ok(())
    }

    /// Counts one record written or reserved (a wildcard `irecv`'s hole counts too, so that
    /// `TIMELESS_INJECT_PANIC` hits whatever record comes n-th).
    fn count_record(&mut self) {
        self.records += 1;
        if self.settings.inject_panic_at == Some(self.records) {
            panic!(
                "panic injected by TIMELESS_INJECT_PANIC at record {}",
                self.records
            );
        }
    }

    /// Appends a comment line `"# <args>"` (SimGrid skips it).
    pub fn note(&mut self, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        self.out.line(format_args!("# {args}"))?;
        Ok(())
    }

    /// Accounts the CPU time since the tracer last returned to the program as compute (and
    /// the instructions, `ins_in` being the counter at entry, when counters are used). It is
    /// written before the next action record, so calls that record nothing (a failed
    /// `MPI_Iprobe` in a polling loop) do not split a burst.
    pub fn burst(
        &mut self,
        t_in: f64,
        ins_in: Option<crate::counters::Reading>,
        call: TypeId,
    ) -> Result<(), Fail> {
        self.current_call = call;
        let cpu = (t_in - self.last_exit).max(0.0);
        self.pending.add(cpu);
        if let Some(c) = &mut self.counted {
            match c
                .last_exit
                .zip(ins_in)
                .and_then(|(a, b)| crate::counters::delta(a, b))
            {
                Some(n) => {
                    c.pending_instructions += n;
                    c.counted_intervals += 1;
                }
                None => {
                    c.pending_uncounted_cpu += cpu;
                    c.uncounted_intervals += 1;
                }
            }
        }
        Ok(())
    }

    /// Writes the pending compute if the burst since the last record is long enough, or the
    /// carried compute reaches its cap (in CPU seconds, with or without counters; see
    /// `burst`); otherwise it carries over.
    fn flush_compute(&mut self) -> Result<(), Fail> {
        let site = (self.last_record_call, self.current_call);
        self.last_record_call = self.current_call;
        let state = self.sites.entry(site).or_default();
        if let Some(cpu_secs) = self.pending.take_at(&self.settings.burst_rule, state) {
            let flops = match &mut self.counted {
                None => (cpu_secs * self.speed).round(),
                Some(c) => {
                    let f = crate::counters::burst_flops(
                        c.pending_instructions,
                        c.flops_per_instruction,
                    ) + c.pending_uncounted_cpu * self.speed;
                    c.pending_instructions = 0;
                    c.pending_uncounted_cpu = 0.0;
                    f.round()
                }
            };
            if flops >= 1.0 {
                let flops = flops as u64;
                let key = RecordKey {
                    record: Record::Compute,
                    comm: None,
                    site: None,
                };
                self.untimed_action(
                    format_args!("compute {flops}"),
                    None,
                    Some(&key),
                    Some(flops as f64),
                )?;
            }
        }
        Ok(())
    }

    /// Recording resumes after a pause: the compute since the pause is dropped.
    pub fn resume(&mut self) {
        self.last_exit = thread_cpu_chained_secs();
        self.mark_counter();
    }

    /// Reads the instruction counter where a burst starts, when counters are used.
    fn mark_counter(&mut self) {
        if let Some(c) = &mut self.counted {
            c.last_exit = crate::counters::thread_instructions();
        }
    }

    /// Marks the end of the tracer's work for this call: writes the buffered lines if the last
    /// flush is older than the flush period, then starts the next burst (after the write, so
    /// that its cost stays out of the burst).
    pub fn end_event(&mut self) -> Result<(), Fail> {
        if crate::profile::only() {
            return Ok(());
        }
        let r = self.flush_if_due(crate::clock::last_point_wall_secs());
        self.last_exit = thread_cpu_chained_secs();
        self.mark_counter();
        r
    }

    /// Writes the buffered whole lines (up to the first unresolved wildcard `irecv`) of both
    /// files if the last flush is at least the flush period before `now_wall` (seconds,
    /// `CLOCK_MONOTONIC`).
    pub fn flush_if_due(&mut self, now_wall: f64) -> Result<(), Fail> {
        let period = self.settings.flush_secs;
        if period > 0.0 && now_wall - self.last_flush_wall >= period && !self.closed {
            self.flush_buffered()?;
        }
        Ok(())
    }

    /// Writes the buffered whole lines of both files now.
    pub fn flush_buffered(&mut self) -> Result<(), Fail> {
        self.last_flush_wall = crate::clock::wall_secs();
        self.out.flush_ready()?;
        if let Some(s) = &mut self.stamped {
            s.writer().flush_ready()?;
        }
        Ok(())
    }

    /// Writes the last records and closes the trace (`MPI_Finalize`, `MPI_Abort`, exit).
    pub fn close(&mut self, last: &str) -> Result<(), Fail> {
        if self.closed {
            return Ok(());
        }
        self.clock_note()?;
        self.closed = true;
        if !last.is_empty() {
            self.out.line(format_args!("{last}"))?;
        }
        if let Some(c) = &self.callsites {
            crate::callsite::closed(c);
        }
        let unfilled =
            |id| format!("# irecv #{id} from MPI_ANY_SOURCE/MPI_ANY_TAG never completed");
        self.out.finish(&unfilled)?;
        if let Some(s) = &mut self.stamped {
            s.writer().finish(&unfilled)?;
        }
        Ok(())
    }

    /// Writes, once, how often the CPU clock was read and estimated (see `clock`), as a comment
    /// before the last record.
    pub fn clock_note(&mut self) -> Result<(), Fail> {
        if self.clock_noted {
            return Ok(());
        }
        self.clock_noted = true;
        let (exact, estimated) = crate::clock::chained_reads();
        self.note(format_args!(
            "thread CPU clock: {exact} real reads, {estimated} estimated from the wall clock \
             (intervals up to {:e} s)",
            crate::clock::exact_above_secs()
        ))?;
        if let Some(c) = &self.counted {
            let (n, u) = (c.counted_intervals, c.uncounted_intervals);
            self.note(format_args!(
                "instruction counter: {n} intervals counted, {u} measured with the CPU clock \
                 instead (no counter on their thread, or across threads)"
            ))?;
        }
        Ok(())
    }

    /// From a signal handler: writes the buffered whole lines, then `last`, and closes the
    /// trace (see `signals`).
    pub fn flush_on_signal(&mut self, last: &'static [u8]) {
        if self.closed {
            return;
        }
        self.closed = true;
        self.out.write_on_signal(last);
        if let Some(s) = &self.stamped {
            s.writer_ref().write_on_signal(last);
        }
    }

    /// After a failure: write what is recorded, with a comment, and stop.
    pub fn abandon(&mut self, reason: &str) {
        if self.closed {
            return;
        }
        let _ = self.close(&format!("# tracing stopped here: {reason}"));
    }

    /// Element count and datatype id of `count` elements of `dt`.
    pub fn volume(&self, count: c_int, dt: MPI_Datatype) -> Result<(u64, u8), Fail> {
        let count = count.max(0) as u64;
        if let Some(id) = self.types.simgrid_id(dt) {
            return Ok((count, id));
        }
        let size = mpi::type_size(dt).ok_or_else(|| Fail::new("MPI_Type_size failed"))?;
        Ok((count * size, BYTE_ID))
    }

    /// Tells the profile (if kept) what the call being traced moves on `comm`: `sent` and
    /// `recv` bytes (see `profile::Capture::direct`). Call it before writing the record.
    pub fn profile_direct(&mut self, comm: MPI_Comm, sent: u64, recv: u64) -> Result<(), Fail> {
        if self.profile.is_some() {
            let id = self.comms.get(comm)?.id;
            if let Some(p) = &mut self.profile {
                p.direct(id, sent, recv);
            }
        }
        Ok(())
    }

    /// Volumes of an array of `n` element counts of `dt` (`None`: zeros).
    pub fn volumes(
        &self,
        counts: Option<&[c_int]>,
        n: usize,
        dt: MPI_Datatype,
    ) -> Result<(Vec<u64>, u8), Fail> {
        let Some(raw) = counts else {
            return Ok((vec![0; n], BYTE_ID));
        };
        let mut out = Vec::with_capacity(n);
        let mut id = self.volume(0, dt)?.1;
        for &c in raw {
            let (v, i) = self.volume(c, dt)?;
            out.push(v);
            id = i;
        }
        Ok((out, id))
    }

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

    /// The communicator of the oldest request the tracer tracks under `key` (a request
    /// handle), 0 for the world; `None` if untracked or a collective's.
    pub fn request_comm(&self, key: u64) -> Option<u32> {
        match self.reqs.front(key)? {
            Pending::Send { comm, .. } | Pending::Recv { comm, .. } => Some(comm.unwrap_or(0)),
            Pending::Collective => None,
        }
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

    /// Starts tracking a request.
    pub fn track(&mut self, req: MPI_Request, p: Pending) {
        if req != mpi::request_null() {
            self.reqs.push(handle_key(req), p);
        }
    }

    fn pop(&mut self, req: u64) -> Option<Pending> {
        self.reqs.pop(req)
    }

    /// Stops tracking a request without recording anything (`MPI_Request_free`).
    pub fn untrack(&mut self, req: u64) -> Result<(), Fail> {
        if let Some(Pending::Recv { hole: Some(h), .. }) = self.pop(req) {
            self.hole_sites.remove(&h);
            self.out
                .fill(h, format_args!("# irecv freed before its source was known"))?;
            self.fill_stamped(
                h,
                false,
                format_args!("# irecv freed before its source was known"),
            )?;
        }
        Ok(())
    }

    /// Number of point-to-point requests being tracked.
    pub fn pending_p2p(&self) -> usize {
        self.reqs
            .iter()
            .filter(|p| !matches!(p, Pending::Collective))
            .count()
    }

    /// The `wait` key of a pending request if it is known before completion.
    pub fn known_key(&self, req: u64) -> Option<WaitKey> {
        match self.reqs.front(req)? {
            Pending::Send { dst, tag, comm } => Some(WaitKey {
                src: self.rank,
                dst: *dst,
                tag: *tag,
                comm: *comm,
            }),
            Pending::Recv {
                src: Some(s),
                tag: Some(t),
                comm,
                ..
            } => Some(WaitKey {
                src: *s,
                dst: self.rank,
                tag: *t,
                comm: *comm,
            }),
            _ => None,
        }
    }

    /// A tracked request completed with `status`: fills its record if it was a wildcard
    /// receive. Returns whether it was a point-to-point request, and its `wait` key (`None`
    /// for collectives, cancelled or unknown requests).
    pub fn complete(
        &mut self,
        req: u64,
        status: &MPI_Status,
    ) -> Result<(bool, Option<WaitKey>), Fail> {
        let Some(p) = self.pop(req) else {
            return Ok((false, None));
        };
        match p {
            Pending::Send { dst, tag, comm } => Ok((
                true,
                Some(WaitKey {
                    src: self.rank,
                    dst,
                    tag,
                    comm,
                }),
            )),
            Pending::Collective => Ok((false, None)),
            Pending::Recv {
                src,
                tag,
                peers,
                comm,
                count,
                dt,
                hole,
            } => {
                if mpi::status_cancelled(status) {
                    if let Some(h) = hole {
                        self.hole_sites.remove(&h);
                        self.out.fill(h, format_args!("# irecv cancelled"))?;
                        self.fill_stamped(h, false, format_args!("# irecv cancelled"))?;
                    }
                    return Ok((true, None));
                }
                let src = match src {
                    Some(s) => s,
                    None => peers
                        .as_deref()
                        .and_then(|p| p.get(status.MPI_SOURCE as usize))
                        .copied()
                        .ok_or_else(|| Fail::new("completed receive without a valid source"))?,
                };
                let tag = tag.unwrap_or(status.MPI_TAG);
                if let Some(p) = &mut self.profile {
                    // The profile counts what arrived, the trace what was posted.
                    let size = timeless_trace::Datatype::from_id(u32::from(dt))
                        .map_or(1, |d| d.size_bytes());
                    let posted = count.saturating_mul(u64::from(size));
                    if let Some(got) = mpi::received_bytes(status) {
                        p.irecv_arrived(comm.unwrap_or(0), posted, got);
                    }
                }
                if let Some(h) = hole {
                    let rank = self.rank;
                    let key = RecordKey {
                        record: Record::Recv {
                            nonblocking: true,
                            src,
                            tag,
                            count,
                            dt,
                        },
                        comm,
                        site: self.hole_sites.remove(&h),
                    };
                    self.out.fill_record(
                        h,
                        Some(&key),
                        format_args!(
                            "{rank} {}{}{}",
                            key.record,
                            CommField(comm),
                            SiteField(key.site)
                        ),
                    )?;
                    self.fill_stamped(
                        h,
                        true,
                        format_args!("irecv {src} {tag} {count} {dt}{}", CommField(comm)),
                    )?;
                }
                Ok((
                    true,
                    Some(WaitKey {
                        src,
                        dst: self.rank,
                        tag,
                        comm,
                    }),
                ))
            }
        }
    }

    /// Reserves the place of a wildcard `irecv` record of `count` elements of SimGrid datatype
    /// `dt` on communicator field `comm`, after the compute burst before it (the
    /// communicator's `comm_def` must be written already: see [`Tracer::comm`]).
    pub fn hole(&mut self, count: u64, dt: u8, comm: Option<u32>) -> Result<HoleId, Fail> {
        if let Some(p) = &mut self.profile {
            let size =
                timeless_trace::Datatype::from_id(u32::from(dt)).map_or(1, |d| d.size_bytes());
            p.recv_bytes(count.saturating_mul(u64::from(size)), comm);
        }
        self.flush_compute()?;
        self.count_record();
        let h = self.out.hole();
        if let Some(cs) = self.callsite {
            self.hole_sites.insert(h, cs);
        }
        if let Some(s) = &mut self.stamped {
            // Both writers number their holes in creation order.
            let hs = s.hole();
            debug_assert_eq!(h, hs);
        }
        Ok(h)
    }

    fn fill_stamped(
        &mut self,
        h: HoleId,
        record: bool,
        args: fmt::Arguments<'_>,
    ) -> Result<(), Fail> {
        let rank = self.rank;
        if let Some(s) = &mut self.stamped {
            s.fill(h, rank, record, args)?;
        }
        Ok(())
    }

    /// Remembers a persistent request created by a successful `*_init` call.
    pub fn add_persistent(&mut self, req: MPI_Request, p: Persistent) {
        if req != mpi::request_null() {
            self.persistent.insert(handle_key(req), p);
        }
    }

    /// Remembers a message matched by `MPI_Mprobe`/`MPI_Improbe`.
    pub fn add_message(&mut self, msg: mpi::MPI_Message, m: Matched) {
        self.messages.insert(handle_key(msg), m);
    }

    /// The matched message `msg` (a handle key read before the receive freed it), forgotten.
    pub fn take_message(&mut self, msg: u64) -> Option<Matched> {
        self.messages.remove(&msg)
    }

    /// Forgets a freed persistent request.
    pub fn forget_persistent(&mut self, req: u64) {
        self.persistent.remove(&req);
    }

    /// `MPI_Start` of the persistent request `req`: records its `isend` or `irecv` and
    /// tracks it like a nonblocking one. Unknown requests (created while recording was
    /// paused) record nothing.
    pub fn start(&mut self, req: MPI_Request) -> Result<(), Fail> {
        let Some(p) = self.persistent.get(&handle_key(req)).cloned() else {
            return Ok(());
        };
        match p {
            Persistent::Null => {}
            Persistent::Send {
                dst,
                tag,
                count,
                dt,
                comm,
            } => {
                self.rec_record(
                    Record::Send {
                        nonblocking: true,
                        dst,
                        tag,
                        count,
                        dt,
                    },
                    comm,
                )?;
                self.track(req, Pending::Send { dst, tag, comm });
            }
            Persistent::Recv {
                src,
                tag,
                peers,
                count,
                dt,
                comm,
            } => {
                let hole = match (src, tag) {
                    (Some(s), Some(g)) => {
                        self.rec_record(
                            Record::Recv {
                                nonblocking: true,
                                src: s,
                                tag: g,
                                count,
                                dt,
                            },
                            comm,
                        )?;
                        None
                    }
                    _ => Some(self.hole(count, dt, comm)?),
                };
                self.track(
                    req,
                    Pending::Recv {
                        src,
                        tag,
                        peers: src.is_none().then_some(peers),
                        comm,
                        count,
                        dt,
                        hole,
                    },
                );
            }
        }
        Ok(())
    }

    /// The periodic flush's period, seconds (0: none).
    pub fn settings_flush_secs(&self) -> f64 {
        self.settings.flush_secs
    }

    /// Number of records written or reserved so far.
    pub fn records(&self) -> u64 {
        self.records
    }
}
