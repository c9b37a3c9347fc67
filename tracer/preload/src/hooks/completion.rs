//! Completion calls: wait, test and their any/all/some forms, request_free.

use super::*;

/// `wait`.
pub struct Wait;
impl Hook<(Req, St)> for Wait {
    type Stash = u64;
    fn pre(_: &mut Tracer, &(req, _): &(Req, St)) -> Result<u64, Fail> {
        // SAFETY: the request argument, read before the call frees it.
        Ok(handle_key(unsafe { *req }))
    }
    fn post(t: &mut Tracer, &(_, st): &(Req, St), key: u64) -> Result<(), Fail> {
        if let (_, Some(k)) = t.complete(key, status(st))? {
            if let Some(p) = &mut t.profile {
                p.direct(k.comm.unwrap_or(0), 0, 0);
            }
            completion_rec(t, k, WAIT)?;
        }
        Ok(())
    }
}

/// `test`.
pub struct Test;
impl Hook<(Req, *mut c_int, St)> for Test {
    type Stash = (u64, Option<WaitKey>);
    fn pre(t: &mut Tracer, &(req, _, _): &(Req, *mut c_int, St)) -> Result<Self::Stash, Fail> {
        // SAFETY: the request argument, read before the call frees it.
        let key = handle_key(unsafe { *req });
        Ok((key, t.known_key(key)))
    }
    fn post(
        t: &mut Tracer,
        &(_, flag, st): &(Req, *mut c_int, St),
        (key, known): Self::Stash,
    ) -> Result<(), Fail> {
        // SAFETY: flag output of a successful call.
        if unsafe { *flag } != 0 {
            if let (_, Some(k)) = t.complete(key, status(st))? {
                completion_rec(t, k, TEST)?;
                completion_rec(t, k, WAIT)?;
            }
        } else if let Some(k) = known {
            completion_rec(t, k, TEST)?;
        }
        Ok(())
    }
}

/// Records the completion of the requests `done` (index into `keys`, status): `waitall` if
/// they are all the rank's pending point-to-point requests (`allow_waitall`), else one `wait`
/// each.
fn completed(
    t: &mut Tracer,
    keys: &[u64],
    done: &[(usize, *mut MPI_Status)],
    allow_waitall: bool,
) -> Result<(), Fail> {
    let pending = t.pending_p2p();
    let mut p2p = 0;
    let mut waits = Vec::with_capacity(done.len());
    for &(i, st) in done {
        let (was_p2p, key) = t.complete(keys[i], status(st))?;
        p2p += usize::from(was_p2p);
        waits.extend(key);
    }
    if allow_waitall && p2p > 0 && p2p == pending {
        t.rec_record(Record::WaitAll, None)
    } else {
        waits
            .into_iter()
            .try_for_each(|k| completion_rec(t, k, WAIT))
    }
}

fn all_of(n: usize, statuses: St) -> Vec<(usize, St)> {
    // SAFETY: pointer arithmetic inside an array of `n` statuses.
    (0..n).map(|i| (i, unsafe { statuses.add(i) })).collect()
}

/// Whether a test call's flag output says it completed something.
fn flagged(flag: *mut c_int) -> bool {
    // SAFETY: flag output of a successful call.
    unsafe { *flag != 0 }
}

/// `waitall`, `testall`.
pub struct WaitAll;
/// mpisee attributes a `waitall`'s time to the communicator of its first request.
fn hint_first(t: &mut Tracer, keys: &[u64]) {
    if t.profile.is_some() {
        if let Some(c) = keys.iter().find_map(|&k| t.request_comm(k)) {
            if let Some(p) = &mut t.profile {
                p.hint_comm(c);
            }
        }
    }
}

impl Hook<(c_int, Req, St)> for WaitAll {
    type Stash = Vec<u64>;
    fn pre(t: &mut Tracer, &(n, reqs, _): &(c_int, Req, St)) -> Result<Vec<u64>, Fail> {
        let keys = read_reqs(n, reqs);
        hint_first(t, &keys);
        Ok(keys)
    }
    fn post(t: &mut Tracer, &(_, _, st): &(c_int, Req, St), keys: Vec<u64>) -> Result<(), Fail> {
        completed(t, &keys, &all_of(keys.len(), st), true)
    }
}
impl Hook<(c_int, Req, *mut c_int, St)> for WaitAll {
    type Stash = Vec<u64>;
    fn pre(
        t: &mut Tracer,
        &(n, reqs, _, _): &(c_int, Req, *mut c_int, St),
    ) -> Result<Vec<u64>, Fail> {
        let keys = read_reqs(n, reqs);
        hint_first(t, &keys);
        Ok(keys)
    }
    fn post(
        t: &mut Tracer,
        &(_, _, flag, st): &(c_int, Req, *mut c_int, St),
        keys: Vec<u64>,
    ) -> Result<(), Fail> {
        if !flagged(flag) {
            return Ok(());
        }
        completed(t, &keys, &all_of(keys.len(), st), true)
    }
}

/// `waitany`, `testany`.
pub struct WaitAny;
fn any_done(t: &mut Tracer, keys: &[u64], index: *mut c_int, st: St) -> Result<(), Fail> {
    // SAFETY: index output of the call.
    let i = unsafe { *index };
    if i == mpi::undefined() || i < 0 || i as usize >= keys.len() {
        return Ok(());
    }
    completed(t, keys, &[(i as usize, st)], false)
}
impl Hook<(c_int, Req, *mut c_int, St)> for WaitAny {
    type Stash = Vec<u64>;
    fn pre(
        _: &mut Tracer,
        &(n, reqs, _, _): &(c_int, Req, *mut c_int, St),
    ) -> Result<Vec<u64>, Fail> {
        Ok(read_reqs(n, reqs))
    }
    fn post(
        t: &mut Tracer,
        &(_, _, index, st): &(c_int, Req, *mut c_int, St),
        keys: Vec<u64>,
    ) -> Result<(), Fail> {
        any_done(t, &keys, index, st)
    }
}
impl Hook<(c_int, Req, *mut c_int, *mut c_int, St)> for WaitAny {
    type Stash = Vec<u64>;
    fn pre(
        _: &mut Tracer,
        &(n, reqs, _, _, _): &(c_int, Req, *mut c_int, *mut c_int, St),
    ) -> Result<Vec<u64>, Fail> {
        Ok(read_reqs(n, reqs))
    }
    fn post(
        t: &mut Tracer,
        &(_, _, index, flag, st): &(c_int, Req, *mut c_int, *mut c_int, St),
        keys: Vec<u64>,
    ) -> Result<(), Fail> {
        if !flagged(flag) {
            return Ok(());
        }
        any_done(t, &keys, index, st)
    }
}

/// `waitsome`, `testsome`.
pub struct WaitSome;
type SomeArgs = (c_int, Req, *mut c_int, *mut c_int, St);
impl Hook<SomeArgs> for WaitSome {
    type Stash = Vec<u64>;
    fn pre(_: &mut Tracer, &(n, reqs, _, _, _): &SomeArgs) -> Result<Vec<u64>, Fail> {
        Ok(read_reqs(n, reqs))
    }
    fn post(
        t: &mut Tracer,
        &(_, _, outcount, indices, st): &SomeArgs,
        keys: Vec<u64>,
    ) -> Result<(), Fail> {
        // SAFETY: outputs of the call: `outcount` indices and statuses.
        let n = unsafe { *outcount };
        if n == mpi::undefined() || n <= 0 {
            return Ok(());
        }
        let idx = unsafe { std::slice::from_raw_parts(indices, n as usize) };
        let done: Vec<(usize, St)> = idx
            .iter()
            .enumerate()
            .filter(|(_, &i)| i >= 0 && (i as usize) < keys.len())
            .map(|(k, &i)| (i as usize, unsafe { st.add(k) }))
            .collect();
        completed(t, &keys, &done, false)
    }
}

/// `request_free`: the request (nonblocking or persistent) is no longer followed.
pub struct RequestFree;
impl Hook<(Req,)> for RequestFree {
    type Stash = u64;
    const WHILE_PAUSED: bool = true;
    fn pre(_: &mut Tracer, &(req,): &(Req,)) -> Result<u64, Fail> {
        // SAFETY: the request argument, read before the call frees it.
        Ok(handle_key(unsafe { *req }))
    }
    fn post(t: &mut Tracer, _: &(Req,), key: u64) -> Result<(), Fail> {
        t.forget_persistent(key);
        t.untrack(key)
    }
}
