//! The CANN loader and the VMM owners against the fake CANN: a missing library and a missing
//! symbol are clear errors; windows map real memory, export and import; a failure injected at
//! every call leaves nothing live and names the call.

mod fake_cann;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pto_device_sys::cann::vmm::{Communicator, DeviceContext, Window};
use pto_device_sys::cann::{Cann, CannError};

/// The fake's state is per process: tests that use it run one at a time.
static FAKE: Mutex<()> = Mutex::new(());

#[test]
fn a_missing_cann_says_what_was_looked_for_and_how_to_fix_it() {
    let nowhere = PathBuf::from("/nonexistent/pto-cann");
    let e = Cann::load_from(&[nowhere]).unwrap_err();
    assert!(
        matches!(
            e,
            CannError::NotFound {
                library: "libascendcl.so",
                ..
            }
        ),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("/nonexistent/pto-cann/libascendcl.so"),
        "{text}"
    );
    assert!(text.contains("ASCEND_HOME_PATH"), "{text}");
}

#[test]
fn a_cann_without_a_symbol_the_runtime_calls_is_refused_by_name() {
    let _g = FAKE.lock().unwrap_or_else(|p| p.into_inner());
    let dir = fake_cann::build("nomap", &["FAKE_OMIT_MAPMEM"]);
    let e = Cann::load_from(std::slice::from_ref(&dir)).unwrap_err();
    match &e {
        CannError::MissingSymbol { library, symbol } => {
            assert_eq!(*symbol, "aclrtMapMem");
            assert_eq!(library, &dir.join("libascendcl.so"));
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("does not export aclrtMapMem"));
}

#[test]
fn an_optional_symbol_that_is_absent_is_only_reported() {
    let _g = FAKE.lock().unwrap_or_else(|p| p.into_inner());
    let without = fake_cann::build("nopid", &["FAKE_OMIT_SETPID"]);
    let cann = Cann::load_from(std::slice::from_ref(&without)).unwrap();
    assert!(!cann.has_pid_restriction());
    let with = fake_cann::build("pid", &[]);
    let cann = Cann::load_from(std::slice::from_ref(&with)).unwrap();
    assert!(cann.has_pid_restriction());
}

/// What a rank does: device, communicator, a window, exported and imported back.
fn sequence(cann: &Arc<Cann>) -> Result<(), CannError> {
    let _dev = DeviceContext::open(cann, 0)?;
    let root = cann.root_info()?;
    let _comm = Communicator::init(cann, 1, &root, 0)?;
    let w = Window::allocate(cann, 0, 100_000)?;
    let shared = w.export()?;
    let peer = Window::import(cann, shared, 0, w.size())?;
    assert_eq!(w.size(), 131_072, "rounded up to the granularity");
    // The same memory through both mappings.
    let a = w.base() as *mut u64;
    let b = peer.base() as *const u64;
    // SAFETY: both are live mappings of the same `size` bytes; the writes and reads are
    // aligned and in range.
    unsafe {
        a.add(7).write_volatile(0xfeed);
        assert_eq!(b.add(7).read_volatile(), 0xfeed);
    }
    Ok(())
}

#[test]
fn windows_map_export_and_import_and_every_failure_gives_everything_back() {
    let _g = FAKE.lock().unwrap_or_else(|p| p.into_inner());
    let dir = fake_cann::build("vmm", &[]);
    let cann = Arc::new(Cann::load_from(std::slice::from_ref(&dir)).unwrap());
    assert_eq!(cann.libraries()[0], dir.join("libascendcl.so"));
    let ctl = fake_cann::Control::open(&dir);
    let before = ctl.calls();
    sequence(&cann).unwrap();
    let calls = ctl.calls() - before;
    assert_eq!(ctl.live(), 0, "a clean run gives everything back");
    // The calls that set the sequence up (its releases come after): aclInit, SetDevice,
    // GetRootInfo, CommInitRootInfo, then granularity, malloc, reserve, map and set-access
    // of the window, export, and import, reserve, map and set-access of the peer's.
    let setup = 14;
    assert!(calls > setup, "{calls} calls in all");
    for k in 1..=setup {
        ctl.fail_at(k);
        let e = match sequence(&cann) {
            Err(e) => e,
            Ok(()) => panic!("a failure injected at call {k} did not surface"),
        };
        ctl.fail_at(0);
        assert!(matches!(e, CannError::Call { .. }), "call {k}: {e}");
        assert_eq!(
            ctl.live(),
            0,
            "after a failure at call {k} ({e}) something is still live"
        );
    }
    sequence(&cann).unwrap();
    assert_eq!(ctl.live(), 0);
}
