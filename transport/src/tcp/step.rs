//! What connect and accept share: a stage machine advanced one step per call. The stage is
//! taken out of the caller's state for the call, so on an error it drops there, releasing
//! what it held, and the state is left idle.
#![forbid(unsafe_code)]

use super::conn::TcpConn;
use crate::error::TransportError;

/// What one stage led to.
pub(super) enum Next<S> {
    /// Nothing to do until the socket or the clock moves.
    Stay(S),
    /// A step was taken.
    Step(S),
    /// A connection came out (boxed: the other variants are small).
    Done(Box<TcpConn>),
}

/// Runs `advance` on the stage in `stage` and counts a step in `steps` if one was taken.
/// One step per call: a caller (or a fault plan) sees every stable state.
pub(super) fn step<S: Default>(
    stage: &mut S,
    steps: &mut u32,
    advance: impl FnOnce(S) -> Result<Next<S>, TransportError>,
) -> Result<Option<TcpConn>, TransportError> {
    match advance(std::mem::take(stage))? {
        Next::Stay(s) => {
            *stage = s;
            Ok(None)
        }
        Next::Step(s) => {
            *stage = s;
            *steps += 1;
            Ok(None)
        }
        Next::Done(c) => {
            *steps += 1;
            Ok(Some(*c))
        }
    }
}
