//! The call signature table (Pilgrim `000_*` §2.1): distinct signatures, each the terminal of
//! its index. Lookups go through an exact map from the signature bytes (never a narrower hash).

use rustc_hash::FxHashMap;

/// Distinct call signatures in order of first use; terminal `t` is `signatures()[t]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallSignatureTable {
    signatures: Vec<Box<[u8]>>,
    index: FxHashMap<Box<[u8]>, u32>,
}

impl CallSignatureTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The terminal of `signature`, added to the table on first use.
    pub fn intern(&mut self, signature: &[u8]) -> u32 {
        if let Some(&t) = self.index.get(signature) {
            return t;
        }
        let t = self.signatures.len() as u32;
        let key: Box<[u8]> = signature.into();
        self.signatures.push(key.clone());
        self.index.insert(key, t);
        t
    }

    /// Signatures by terminal.
    pub fn signatures(&self) -> &[Box<[u8]>] {
        &self.signatures
    }

    /// Number of terminals.
    pub fn len(&self) -> usize {
        self.signatures.len()
    }

    /// True if no signature was interned.
    pub fn is_empty(&self) -> bool {
        self.signatures.is_empty()
    }

    /// Adds every signature of `other` (Pilgrim §2.5.1's union) and returns, for each of
    /// `other`'s terminals, its terminal in `self`.
    pub fn union(&mut self, other: &CallSignatureTable) -> Vec<u32> {
        other.signatures.iter().map(|s| self.intern(s)).collect()
    }
}
