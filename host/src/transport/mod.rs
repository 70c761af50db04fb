//! The transport between hosts (multi-host rendezvous and bootstrap): its wire format
//! (listen handles, hellos that name the job, sequenced frames) and a bootstrap over TCP.

pub mod bootstrap;
pub mod wire;
