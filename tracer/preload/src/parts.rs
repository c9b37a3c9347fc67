//! Per-rank byte parts gathered on rank 0 at `MPI_Finalize` (the profile, the flow graph).
//!
//! `PMPI_Gather` of each part's length (-1 for a rank that has none: its tracing failed), then
//! `PMPI_Gatherv` of the bytes, on `MPI_COMM_WORLD`. Every rank must call [`gather`], traced or
//! not, or the others wait.

use std::ffi::c_int;

/// Sends this rank's `part` to rank 0. Returns `None` on the other ranks; on rank 0 every
/// rank's part in rank order, or why there is none (a rank without a part, an MPI error, more
/// than 2 GiB in all).
pub fn gather(part: Option<Vec<u8>>) -> Option<Result<Vec<Vec<u8>>, String>> {
    let (rank, size) = crate::mpi::rank_size(crate::mpi::base_comm())?;
    let bytes = part.as_deref().unwrap_or(&[]);
    // Length -1 marks a rank without a part.
    let len: c_int = match &part {
        None => -1,
        Some(b) => c_int::try_from(b.len()).unwrap_or(-1),
    };
    let n = size as usize;
    let mut lens = vec![0 as c_int; if rank == 0 { n } else { 0 }];
    // SAFETY: one int from each rank into `lens` (n entries on the root).
    let ok = unsafe {
        mpi_sys::PMPI_Gather(
            (&len as *const c_int).cast(),
            1,
            mpi_sys::RSMPI_INT32_T,
            lens.as_mut_ptr().cast(),
            1,
            mpi_sys::RSMPI_INT32_T,
            0,
            crate::mpi::base_comm(),
        )
    } == crate::mpi::SUCCESS;
    let counts: Vec<c_int> = lens.iter().map(|&l| l.max(0)).collect();
    let mut displs = Vec::with_capacity(counts.len());
    let mut total: usize = 0;
    for &c in &counts {
        displs.push(c_int::try_from(total).unwrap_or(c_int::MAX));
        total += c as usize;
    }
    let fits = c_int::try_from(total).is_ok();
    let mut all = vec![0u8; if rank == 0 && fits { total } else { 0 }];
    let send_len = if len < 0 { 0 } else { len };
    // SAFETY: each rank's bytes into `all` at its displacement (the root's arrays have n
    // entries; other ranks pass empty ones, which MPI ignores off the root).
    let ok2 = unsafe {
        mpi_sys::PMPI_Gatherv(
            bytes.as_ptr().cast(),
            send_len,
            mpi_sys::RSMPI_UINT8_T,
            all.as_mut_ptr().cast(),
            counts.as_ptr(),
            displs.as_ptr(),
            mpi_sys::RSMPI_UINT8_T,
            0,
            crate::mpi::base_comm(),
        )
    } == crate::mpi::SUCCESS;
    if rank != 0 {
        return None;
    }
    if !ok || !ok2 || !fits {
        return Some(Err("gathering the ranks' parts failed".into()));
    }
    if let Some(r) = lens.iter().position(|&l| l < 0) {
        return Some(Err(format!("rank {r} stopped tracing (see its message)")));
    }
    Some(Ok((0..n)
        .map(|r| {
            let s = displs[r] as usize;
            all[s..s + counts[r] as usize].to_vec()
        })
        .collect()))
}
