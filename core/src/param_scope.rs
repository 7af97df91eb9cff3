//! The resolved parameters a (sub)diagram's blocks see: a [`Scope`] of [`ScopeVal`]s.
//! (Not to be confused with a plotting scope, [`crate::scope::ScopeSpec`].) A leaf
//! module: the diagram's settings read it and compile's parameter pass fills it, and it
//! depends on neither.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::expr::Quantity;

/// A resolved model parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ScopeVal {
    /// A number with its dimension (bare numbers adapt to any).
    Q(Quantity),
    /// An array (a table, a vector) kept as JSON.
    Json(Value),
    /// A word that is not an expression: the value of a choice parameter
    /// (`"diff_type": "clutch_pack"`, used by `"type": "diff_type"`).
    Text(String),
}

/// Resolved parameters visible to the blocks of one (sub)diagram.
pub type Scope = BTreeMap<String, ScopeVal>;
