//! A frozen grammar: rule bodies of `(symbol, exponent)` pairs, walked without expansion.
//!
//! Rule 0 is the start rule. A symbol is a terminal value or a reference to a later-numbered or
//! earlier-numbered rule; the rule graph must be acyclic ([`Grammar::from_parts`] checks it), so
//! a walk needs a stack no deeper than the number of rules. `X^k` stands for k copies of `X`
//! (Pilgrim `000_*` §2.2).

use crate::error::GrammarError;

/// A symbol of a frozen grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// A terminal value (a call-signature-table index for rank grammars).
    Terminal(u64),
    /// A reference to rule number `.0`.
    Rule(u32),
}

/// An immutable grammar in flat arrays: rule `i`'s body is `bodies[starts[i]..starts[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Grammar {
    bodies: Vec<(Symbol, u64)>,
    starts: Vec<u32>,
}

impl Grammar {
    /// Builds a grammar from flat parts and checks it: `starts` begins at 0, is non-decreasing
    /// and ends at `bodies.len()`; every exponent is >= 1; every rule but rule 0 is non-empty;
    /// every rule reference is in range; the rule graph is acyclic.
    ///
    /// # Errors
    /// [`GrammarError::Invalid`] naming the first violation.
    pub fn from_parts(
        bodies: Vec<(Symbol, u64)>,
        starts: Vec<u32>,
    ) -> Result<Grammar, GrammarError> {
        let bad = |s: String| Err(GrammarError::Invalid(s));
        if starts.first() != Some(&0) || *starts.last().unwrap_or(&1) as usize != bodies.len() {
            return bad("rule table does not cover the symbol array".into());
        }
        let nrules = starts.len() - 1;
        if nrules == 0 {
            return bad("no start rule".into());
        }
        for (i, w) in starts.windows(2).enumerate() {
            if w[1] < w[0] || (i > 0 && w[1] == w[0]) {
                return bad(format!("rule {i} has an empty or negative-length body"));
            }
        }
        for (i, &(sym, exp)) in bodies.iter().enumerate() {
            if exp == 0 {
                return bad(format!("symbol {i} has exponent 0"));
            }
            if let Symbol::Rule(r) = sym {
                if r as usize >= nrules || r == 0 {
                    return bad(format!("symbol {i} references rule {r} of {nrules}"));
                }
            }
        }
        let g = Grammar { bodies, starts };
        g.check_acyclic()?;
        Ok(g)
    }

    /// Iterative three-colour depth-first search over rule references.
    fn check_acyclic(&self) -> Result<(), GrammarError> {
        let n = self.rule_count();
        // 0 = unvisited, 1 = on the stack, 2 = done.
        let mut colour = vec![0u8; n];
        for start in 0..n {
            if colour[start] != 0 {
                continue;
            }
            let mut stack = vec![(start as u32, 0usize)];
            colour[start] = 1;
            while let Some(&mut (r, ref mut pos)) = stack.last_mut() {
                let body = self.body(r);
                if *pos == body.len() {
                    colour[r as usize] = 2;
                    stack.pop();
                    continue;
                }
                let sym = body[*pos].0;
                *pos += 1;
                if let Symbol::Rule(q) = sym {
                    match colour[q as usize] {
                        0 => {
                            colour[q as usize] = 1;
                            stack.push((q, 0));
                        }
                        1 => {
                            return Err(GrammarError::Invalid(format!(
                                "rule {q} derives itself (cycle)"
                            )))
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Number of rules, the start rule included.
    pub fn rule_count(&self) -> usize {
        self.starts.len() - 1
    }

    /// Number of symbols over all rule bodies.
    pub fn symbol_count(&self) -> usize {
        self.bodies.len()
    }

    /// Body of rule `r`.
    pub fn body(&self, r: u32) -> &[(Symbol, u64)] {
        let (a, b) = (self.starts[r as usize], self.starts[r as usize + 1]);
        &self.bodies[a as usize..b as usize]
    }

    /// Every symbol of every body, rule 0 first.
    pub fn symbols(&self) -> &[(Symbol, u64)] {
        &self.bodies
    }

    /// Applies `f` to every terminal value (terminal renumbering after a table merge).
    pub fn map_terminals(&mut self, mut f: impl FnMut(u64) -> u64) {
        for (sym, _) in &mut self.bodies {
            if let Symbol::Terminal(t) = sym {
                *t = f(*t);
            }
        }
    }

    /// Length of the expansion, saturating at `u64::MAX`. O(symbols).
    pub fn expanded_len(&self) -> u64 {
        self.weighted_len(|_| 1)
    }

    /// Sum of `weight(t)` over the expansion's terminals t, saturating. O(symbols).
    pub fn weighted_len(&self, weight: impl Fn(u64) -> u64) -> u64 {
        let n = self.rule_count();
        let mut len = vec![0u64; n];
        let mut done = vec![false; n];
        let mut stack = vec![(0u32, 0usize)];
        while let Some(&mut (r, ref mut pos)) = stack.last_mut() {
            let body = self.body(r);
            if *pos == body.len() {
                let total = body.iter().fold(0u64, |acc, &(s, e)| {
                    let one = match s {
                        Symbol::Terminal(t) => weight(t),
                        Symbol::Rule(q) => len[q as usize],
                    };
                    acc.saturating_add(one.saturating_mul(e))
                });
                len[r as usize] = total;
                done[r as usize] = true;
                stack.pop();
                continue;
            }
            let sym = body[*pos].0;
            *pos += 1;
            if let Symbol::Rule(q) = sym {
                if !done[q as usize] {
                    stack.push((q, 0));
                }
            }
        }
        len[0]
    }

    /// Walks the expansion from rule `start` without materialising it.
    pub fn walk(&self, start: u32) -> Walker<'_> {
        Walker::new(self, start)
    }

    /// The expansion of rule 0 as an iterator of terminal values.
    pub fn expand(&self) -> Walker<'_> {
        self.walk(0)
    }

    /// The grammar as one integer sequence (the unit the cross-rank Sequitur pass compresses):
    /// `rule_count`, then per rule `body_len` followed by `(code, exp)` pairs, with
    /// `code = 2·t` for terminal t and `2·r + 1` for rule r.
    pub fn to_words(&self) -> Vec<u64> {
        let mut w = Vec::with_capacity(1 + self.rule_count() + 2 * self.bodies.len());
        w.push(self.rule_count() as u64);
        for r in 0..self.rule_count() as u32 {
            let body = self.body(r);
            w.push(body.len() as u64);
            for &(s, e) in body {
                w.push(match s {
                    Symbol::Terminal(t) => t << 1,
                    Symbol::Rule(q) => (u64::from(q) << 1) | 1,
                });
                w.push(e);
            }
        }
        w
    }

    /// Decodes one grammar from the front of `words` (layout of [`Grammar::to_words`]) and
    /// returns it with the number of words used.
    ///
    /// # Errors
    /// [`GrammarError::Invalid`] if the words run out or describe an invalid grammar.
    pub fn from_words(words: &[u64]) -> Result<(Grammar, usize), GrammarError> {
        let short = || GrammarError::Invalid("grammar words end early".into());
        let mut it = words.iter().copied();
        let mut used = 0usize;
        let mut next = || {
            used += 1;
            it.next().ok_or_else(short)
        };
        let nrules = next()?;
        if nrules == 0 || nrules > words.len() as u64 {
            return Err(GrammarError::Invalid(format!(
                "implausible rule count {nrules}"
            )));
        }
        let mut bodies = Vec::new();
        let mut starts = vec![0u32];
        for _ in 0..nrules {
            let len = next()?;
            if len > words.len() as u64 {
                return Err(GrammarError::Invalid(format!(
                    "implausible body length {len}"
                )));
            }
            for _ in 0..len {
                let code = next()?;
                let exp = next()?;
                let sym = if code & 1 == 0 {
                    Symbol::Terminal(code >> 1)
                } else {
                    let q = u32::try_from(code >> 1).map_err(|_| {
                        GrammarError::Invalid(format!("rule id {} too large", code >> 1))
                    })?;
                    Symbol::Rule(q)
                };
                bodies.push((sym, exp));
            }
            starts.push(bodies.len() as u32);
        }
        Ok((Grammar::from_parts(bodies, starts)?, used))
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    rule: u32,
    pos: u32,
    /// Repetitions of the symbol at `pos` already produced.
    done: u64,
}

/// Position in a grammar's expansion: an explicit stack (depth <= rule count) of
/// (rule, symbol index, repetitions done). Memory is O(depth) whatever the expansion's length.
/// The cursor does not borrow the grammar, so an owner can keep both side by side.
#[derive(Debug, Clone)]
pub struct Cursor {
    stack: Vec<Frame>,
}

impl Cursor {
    /// A cursor at the start of rule `start`'s expansion.
    pub fn new(start: u32) -> Self {
        Cursor {
            stack: vec![Frame {
                rule: start,
                pos: 0,
                done: 0,
            }],
        }
    }

    /// Current stack depth.
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// The next terminal of `grammar`'s expansion (the grammar this cursor was started on).
    pub fn next(&mut self, grammar: &Grammar) -> Option<u64> {
        loop {
            let top = self.stack.last_mut()?;
            let body = grammar.body(top.rule);
            let Some(&(sym, exp)) = body.get(top.pos as usize) else {
                self.stack.pop();
                if let Some(parent) = self.stack.last_mut() {
                    parent.done += 1;
                    let pexp = grammar.body(parent.rule)[parent.pos as usize].1;
                    if parent.done == pexp {
                        parent.pos += 1;
                        parent.done = 0;
                    }
                }
                continue;
            };
            match sym {
                Symbol::Terminal(t) => {
                    top.done += 1;
                    if top.done == exp {
                        top.pos += 1;
                        top.done = 0;
                    }
                    return Some(t);
                }
                Symbol::Rule(q) => self.stack.push(Frame {
                    rule: q,
                    pos: 0,
                    done: 0,
                }),
            }
        }
    }
}

/// Iterator over a grammar's expansion (a [`Cursor`] with its grammar).
#[derive(Debug, Clone)]
pub struct Walker<'g> {
    grammar: &'g Grammar,
    cursor: Cursor,
}

impl<'g> Walker<'g> {
    fn new(grammar: &'g Grammar, start: u32) -> Self {
        Walker {
            grammar,
            cursor: Cursor::new(start),
        }
    }

    /// Current stack depth.
    pub fn depth(&self) -> usize {
        self.cursor.depth()
    }
}

impl Iterator for Walker<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        self.cursor.next(self.grammar)
    }
}
