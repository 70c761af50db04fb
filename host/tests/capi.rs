//! The communicator's C ABI, called as C would (raw pointers, integer codes), ranks on
//! threads.

use std::ffi::CString;
use std::path::Path;

use pto_host::comm::capi::{
    CommHandle, code, comm_alloc_windows, comm_barrier, comm_destroy, comm_get_local_window_base,
    comm_get_window_size, comm_init,
};
use pto_runtime_core::CommContext;

fn run_id(tag: &str) -> CString {
    CString::new(format!("capi-{tag}-{}", std::process::id())).unwrap()
}

#[test]
fn the_six_calls_work_across_ranks() {
    let id = run_id("six");
    let ranks = 3;
    std::thread::scope(|s| {
        for rank in 0..ranks {
            let id = &id;
            s.spawn(move || {
                // SAFETY: every pointer passed below is valid for its call, and the handle is
                // used by this thread only, until comm_destroy.
                unsafe {
                    let h: *mut CommHandle = comm_init(rank, ranks, 0, id.as_ptr());
                    assert!(!h.is_null());
                    let mut ctx = 0u64;
                    assert_eq!(comm_alloc_windows(h, 1000, &mut ctx), code::OK);
                    let ctx = &*(ctx as *const CommContext);
                    assert_eq!((ctx.rank_id, ctx.rank_num), (rank as u32, ranks as u32));
                    let (mut base, mut size) = (0u64, 0usize);
                    assert_eq!(comm_get_local_window_base(h, &mut base), code::OK);
                    assert_eq!(comm_get_window_size(h, &mut size), code::OK);
                    assert_eq!((base, size as u64), (ctx.local_window(), ctx.win_size));
                    assert_eq!(size, 1024, "rounded up to 64");
                    for _ in 0..10 {
                        assert_eq!(comm_barrier(h), code::OK);
                    }
                    assert_eq!(
                        comm_alloc_windows(h, 1000, &mut 0),
                        code::BAD_ARGUMENT,
                        "twice"
                    );
                    assert_eq!(comm_destroy(h), code::OK);
                }
            });
        }
    });
    let object = format!(
        "/dev/shm/{}",
        id.to_str().unwrap().replacen("capi", "pto-capi", 1)
    );
    assert!(!Path::new(&object).exists(), "{object} removed");
}

#[test]
fn bad_arguments_are_codes_not_crashes() {
    let id = run_id("bad");
    // SAFETY: every pointer passed is null or valid for its call; handles are destroyed
    // once.
    unsafe {
        assert!(comm_init(2, 2, 0, id.as_ptr()).is_null(), "rank >= nranks");
        assert!(comm_init(0, 0, 0, id.as_ptr()).is_null());
        assert!(comm_init(0, 65, 0, id.as_ptr()).is_null());
        assert!(comm_init(0, 1, 0, std::ptr::null()).is_null());
        assert_eq!(comm_barrier(std::ptr::null_mut()), code::BAD_ARGUMENT);
        assert_eq!(comm_destroy(std::ptr::null_mut()), code::OK);
        let h = comm_init(0, 1, 0, id.as_ptr());
        assert_eq!(comm_barrier(h), code::BAD_ARGUMENT, "no windows yet");
        assert_eq!(comm_alloc_windows(h, 0, &mut 0), code::BAD_WINDOW);
        assert_eq!(
            comm_alloc_windows(h, 64, std::ptr::null_mut()),
            code::BAD_ARGUMENT
        );
        let bad = CString::new("no/slash").unwrap();
        let h2 = comm_init(0, 1, 0, bad.as_ptr());
        assert_eq!(comm_alloc_windows(h2, 64, &mut 0), code::BAD_RUN_ID);
        assert_eq!(comm_destroy(h2), code::OK);
        assert_eq!(comm_destroy(h), code::OK);
    }
}
