//! Symbolisation of a trace's call-site table (`timeless trace --callsites`): the tracer lists
//! each call site as a module and an offset (`callsites.txt`, see `timeless_trace::callsites`);
//! after the run, each is looked up in its module's debug information with the `addr2line`
//! crate (DWARF line tables, inlined frames, symbol tables for the function when there is no
//! DWARF) and the table is rewritten with function, file and line.

use std::collections::HashMap;
use std::path::Path;

use timeless_trace::callsites::{self, CallSite};
use timeless_trace::TraceError;

use crate::PathError;

/// Why a call-site table could not be symbolised.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallSitesError {
    /// The table does not parse (file:line inside).
    #[error(transparent)]
    Table(#[from] Box<TraceError>),
    /// The symbolised table cannot be written back.
    #[error(transparent)]
    Write(#[from] PathError),
}

/// Fills function, file and line of every site of `sites` found in its module. Returns how
/// many got a source line. The return address is looked up one byte back, inside the call
/// instruction, so that the line is the call's even when the call ends a line's code.
pub fn symbolise(sites: &mut [CallSite]) -> usize {
    let mut loaders: HashMap<String, Option<addr2line::Loader>> = HashMap::new();
    let mut with_line = 0;
    for s in sites.iter_mut() {
        let loader = loaders
            .entry(s.module.clone())
            .or_insert_with(|| addr2line::Loader::new(&s.module).ok());
        let Some(l) = loader else { continue };
        let probe = s.offset.saturating_sub(1);
        if let Ok(mut frames) = l.find_frames(probe) {
            // The innermost frame: the function that made the call, inlined or not.
            if let Ok(Some(f)) = frames.next() {
                if let Some(name) = f.function.as_ref().and_then(|n| n.demangle().ok()) {
                    s.function = Some(name.into_owned());
                }
                if let Some(loc) = f.location {
                    s.file = loc.file.map(str::to_string);
                    s.line = loc.line.unwrap_or(0);
                }
            }
        }
        if s.function.is_none() {
            s.function = l
                .find_symbol(probe)
                .map(|n| addr2line::demangle_auto(n.into(), None).into_owned());
        }
        if s.line > 0 {
            with_line += 1;
        }
    }
    with_line
}

/// Symbolises `dir/callsites.txt` in place; `None` when the directory has none, else the number
/// of sites and of sites with a source line.
///
/// # Errors
/// [`CallSitesError::Table`] for a table that does not parse, [`CallSitesError::Write`] when it
/// cannot be written back.
pub fn symbolise_dir(dir: &Path) -> Result<Option<(usize, usize)>, CallSitesError> {
    let Some(mut sites) = callsites::read_dir_table(dir).map_err(Box::new)? else {
        return Ok(None);
    };
    let with_line = symbolise(&mut sites);
    let path = dir.join(callsites::FILE);
    std::fs::write(&path, callsites::write_table(&sites)).map_err(PathError::at("write", &path))?;
    Ok(Some((sites.len(), with_line)))
}

/// Labels of the sites of `dir/callsites.txt` by id (empty when there is none).
///
/// # Errors
/// The table does not parse.
pub fn labels(dir: &Path) -> Result<std::collections::BTreeMap<u32, String>, Box<TraceError>> {
    Ok(callsites::read_dir_table(dir)
        .map_err(Box::new)?
        .unwrap_or_default()
        .into_iter()
        .map(|s| (s.id, s.label()))
        .collect())
}
