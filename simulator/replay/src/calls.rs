//! What an action is as an MPI call, for observers that profile a replay: see
//! [`timeless_profile::action`], with the rank's default datatype.

pub use timeless_profile::action::CallDesc;
use timeless_trace::Action;

use crate::rank::RankState;

/// The call `action` stands for on the rank whose state is `st`, rank `me` of a communicator of
/// `size` members (see [`timeless_profile::action::describe`]).
pub fn describe(
    action: &Action,
    st: &RankState,
    me: u32,
    size: u32,
    root_is_me: bool,
) -> Option<CallDesc> {
    timeless_profile::action::describe(action, st.default_dt, me, size, root_is_me)
}
