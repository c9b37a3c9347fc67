//! Call sites of MPI calls (`timeless trace --callsites`, `TIMELESS_CALLSITES=1`; README "Call
//! sites"): each action record of a traced call ends with `@cs=<id>`, the place in the program
//! that made the call.
//!
//! **Capture** (every traced call, in `runtime::pre`): the stack is walked with the C++ ABI's
//! unwinder (`_Unwind_Backtrace`, libgcc's, which Rust's standard library links), which reads
//! the DWARF call-frame information, so it needs no frame pointers and sees through inlining in
//! the tracer. Frames in the tracer's own library and in the MPI library (Open MPI's `use
//! mpi_f08` bindings call the tracer's `ompi_*_f` from `libmpi_usempif08`) are skipped; the
//! first other return address is the call site. Every return address met is classified once
//! (`dladdr1`: its module, hence tracer / MPI library / program) and kept in a hash map, so a
//! call costs the walk up to the program's frame plus one lookup per frame; the walk stops at
//! the first known call site.
//!
//! **Ids**: a call site is a module and the return address's offset in it (the address minus
//! the module's load bias); its id is `timeless_trace::callsites::id_of` those, the same on
//! every rank whatever the address-space layout (two sites of one process with the same id,
//! which FNV-1a makes unlikely, are told apart by taking the next free id).
//!
//! **Table**: at `MPI_Finalize` every rank sends its sites (text, the table format without
//! symbols) to rank 0 (`parts::gather`), which writes their union to `callsites.txt` in its
//! trace directory. `timeless trace` then symbolises it (function, file, line) from the
//! modules' debug information.

use std::ffi::{c_int, c_void, CStr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashMap;
use timeless_trace::callsites::{self, CallSite};

static ENABLED: AtomicBool = AtomicBool::new(false);
static CLOSED: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// Frames walked at most per call.
const MAX_FRAMES: usize = 48;

/// Reads `TIMELESS_CALLSITES` (set and not `0`: record call sites).
pub fn configure_from_env() -> bool {
    let on = std::env::var("TIMELESS_CALLSITES").is_ok_and(|v| !v.is_empty() && v != "0");
    ENABLED.store(on, Ordering::Relaxed);
    on
}

/// Whether call sites are recorded.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// In the tracer or the MPI library (or the unwinder): skipped.
    Skip,
    /// A call site of the program, with its id.
    Site(u32),
}

/// One process's call sites.
#[derive(Debug)]
pub struct CallSites {
    /// Classification of every return address met.
    by_ip: FxHashMap<usize, Class>,
    /// Sites by id.
    sites: FxHashMap<u32, (String, u64)>,
    /// The tracer's own link map (its module).
    own: usize,
    /// Path of the main program (`/proc/self/exe`).
    exe: String,
}

#[repr(C)]
struct LinkMap {
    l_addr: usize,
    l_name: *const libc::c_char,
}

const RTLD_DL_LINKMAP: c_int = 2;

/// Module of `addr`: its link map (an identity), load bias and file name (empty for the main
/// program).
fn module_of(addr: usize) -> Option<(usize, usize, String)> {
    // SAFETY: `dladdr1` fills `info` and, with RTLD_DL_LINKMAP, a pointer to the module's
    // `struct link_map`, whose first two members are `l_addr` and `l_name`.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let mut map: *mut c_void = std::ptr::null_mut();
        if libc::dladdr1(addr as *const c_void, &mut info, &mut map, RTLD_DL_LINKMAP) == 0
            || map.is_null()
        {
            return None;
        }
        let lm = &*(map as *const LinkMap);
        let name = if lm.l_name.is_null() {
            String::new()
        } else {
            CStr::from_ptr(lm.l_name).to_string_lossy().into_owned()
        };
        Some((map as usize, lm.l_addr, name))
    }
}

/// Libraries whose frames are not the program's: the MPI library and its bindings, the
/// unwinder.
fn is_library(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    ["libmpi", "libpmpi", "libopen-", "libgcc_s", "libmpich"]
        .iter()
        .any(|p| base.starts_with(p))
}

impl CallSites {
    /// The table of this process (the tracer's module found from one of its functions).
    pub fn new() -> CallSites {
        let own = module_of(CallSites::new as *const () as usize).map_or(0, |m| m.0);
        let exe = std::fs::read_link("/proc/self/exe")
            .unwrap_or_else(|_| PathBuf::from("?"))
            .display()
            .to_string();
        CallSites {
            by_ip: FxHashMap::default(),
            sites: FxHashMap::default(),
            own,
            exe,
        }
    }

    fn classify(&mut self, ip: usize) -> Class {
        let class = match module_of(ip) {
            Some((map, _, _)) if map == self.own => Class::Skip,
            Some((_, _, name)) if is_library(&name) => Class::Skip,
            Some((_, bias, name)) => {
                let module = if name.is_empty() {
                    self.exe.clone()
                } else {
                    name
                };
                self.site(module, ip.wrapping_sub(bias) as u64)
            }
            None => self.site("?".into(), ip as u64),
        };
        self.by_ip.insert(ip, class);
        class
    }

    fn site(&mut self, module: String, offset: u64) -> Class {
        let mut id = callsites::id_of(&module, offset);
        loop {
            match self.sites.get(&id) {
                Some((m, o)) if *m == module && *o == offset => return Class::Site(id),
                Some(_) => id = id.wrapping_add(1),
                None => {
                    self.sites.insert(id, (module, offset));
                    return Class::Site(id);
                }
            }
        }
    }

    /// The call site of the MPI call being traced: the first return address on the stack
    /// outside the tracer and the MPI library.
    pub fn here(&mut self) -> Option<u32> {
        let mut walk = Walk {
            known: &self.by_ip,
            ips: [0; MAX_FRAMES],
            n: 0,
            found: None,
        };
        // SAFETY: the callback only reads the map and writes `walk`, which outlives the call.
        unsafe {
            _Unwind_Backtrace(on_frame, (&mut walk as *mut Walk).cast());
        }
        if let Some(id) = walk.found.filter(|_| walk.n > 0 && self.all_known(&walk)) {
            return Some(id);
        }
        let (ips, n) = (walk.ips, walk.n);
        for &ip in &ips[..n] {
            let class = match self.by_ip.get(&ip) {
                Some(&c) => c,
                None => self.classify(ip),
            };
            if let Class::Site(id) = class {
                return Some(id);
            }
        }
        None
    }

    fn all_known(&self, w: &Walk<'_>) -> bool {
        w.ips[..w.n].iter().all(|ip| self.by_ip.contains_key(ip))
    }

    /// The sites met so far, as a table without symbols.
    pub fn table(&self) -> String {
        let v: Vec<CallSite> = self
            .sites
            .iter()
            .map(|(&id, (m, o))| CallSite {
                id,
                module: m.clone(),
                offset: *o,
                function: None,
                file: None,
                line: 0,
            })
            .collect();
        callsites::write_table(&v)
    }
}

impl Default for CallSites {
    fn default() -> Self {
        CallSites::new()
    }
}

#[repr(C)]
struct UnwindContext {
    _opaque: [u8; 0],
}

type TraceFn = extern "C" fn(*mut UnwindContext, *mut c_void) -> c_int;

extern "C" {
    fn _Unwind_Backtrace(trace: TraceFn, arg: *mut c_void) -> c_int;
    fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
}

const URC_NO_REASON: c_int = 0;
const URC_NORMAL_STOP: c_int = 4;

struct Walk<'a> {
    known: &'a FxHashMap<usize, Class>,
    ips: [usize; MAX_FRAMES],
    n: usize,
    /// A known call site was reached (the walk stopped there).
    found: Option<u32>,
}

/// One frame of the walk: keeps its return address; stops at a known call site or after
/// [`MAX_FRAMES`]. Never panics (no allocation, bounds checked by hand).
extern "C" fn on_frame(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Walk` passed by `here`; `ctx` is the unwinder's.
    let (w, ip) = unsafe { (&mut *(arg as *mut Walk), _Unwind_GetIP(ctx)) };
    if ip == 0 || w.n >= MAX_FRAMES {
        return URC_NORMAL_STOP;
    }
    w.ips[w.n] = ip;
    w.n += 1;
    if let Some(Class::Site(id)) = w.known.get(&ip) {
        w.found = Some(*id);
        return URC_NORMAL_STOP;
    }
    URC_NO_REASON
}

/// The trace is closed: keep this rank's sites for `MPI_Finalize`.
pub fn closed(sites: &CallSites) {
    *CLOSED.lock().unwrap_or_else(|p| p.into_inner()) = Some(sites.table().into_bytes());
}

/// At `MPI_Finalize`, on every rank when call sites are on: gathers the ranks' sites on rank
/// 0, which writes their union to `callsites.txt` in its trace directory.
pub fn at_finalize() {
    if !enabled() {
        return;
    }
    // A rank whose tracing failed sends what it has, or an empty table.
    let part = CLOSED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .unwrap_or_default();
    let Some(all) = crate::parts::gather(Some(part)) else {
        return;
    };
    let dir = crate::setup::trace_dir(0);
    let path = dir.join(callsites::FILE);
    let fail = |why: String| {
        eprintln!(
            "timeless-preload: no call-site table written to {}: {why}",
            path.display()
        )
    };
    let parts = match all {
        Ok(p) => p,
        Err(why) => return fail(why),
    };
    let mut union: FxHashMap<u32, CallSite> = FxHashMap::default();
    for (r, bytes) in parts.iter().enumerate() {
        let text = String::from_utf8_lossy(bytes);
        match callsites::parse_table(&text, std::path::Path::new(&format!("(rank {r})"))) {
            Ok(sites) => {
                for s in sites {
                    union.entry(s.id).or_insert(s);
                }
            }
            Err(e) => return fail(e.to_string()),
        }
    }
    let v: Vec<CallSite> = union.into_values().collect();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(&path, callsites::write_table(&v)));
    if let Err(e) = written {
        fail(e.to_string());
    }
}
