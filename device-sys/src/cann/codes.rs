//! CANN's return codes by name, with what a user can do about each. Host codes (ACL's,
//! the runtime's, the driver's) only: the device runtime's own codes are
//! [`crate::abi::PtoAicpuCode`] and never mixed with these.

/// A CANN code's name and a hint, if the code is one the launch path knows.
pub fn describe(code: i64) -> Option<(&'static str, &'static str)> {
    Some(match code {
        100000 => (
            "ACL_ERROR_INVALID_PARAM",
            "a call was given a bad argument: a bug in the caller, report it",
        ),
        100002 => ("ACL_ERROR_REPEAT_INITIALIZE", "ACL was initialised already"),
        107000 => (
            "ACL_ERROR_RT_PARAM_INVALID",
            "the runtime refused an argument (a registration file must end in .json)",
        ),
        107001 => (
            "ACL_ERROR_RT_INVALID_DEVICEID",
            "no such device: check --device against npu-smi and ASCEND_RT_VISIBLE_DEVICES",
        ),
        107003 => (
            "ACL_ERROR_RT_STREAM_CONTEXT",
            "the stream belongs to another device context: set the device on this thread",
        ),
        207000 => (
            "ACL_ERROR_RT_FEATURE_NOT_SUPPORT",
            "this CANN or driver lacks the feature: upgrade CANN",
        ),
        207001 => (
            "ACL_ERROR_RT_MEMORY_ALLOCATION",
            "device memory ran out: lower `heap_bytes`, `task_window` or the buffer sizes, or \
             free the device (npu-smi info shows who holds it)",
        ),
        507014 => (
            "ACL_ERROR_RT_AICORE_TIMEOUT",
            "an AICore kernel ran past the op-execute timeout: a kernel hangs; the device's \
             run status names the task and core",
        ),
        507018 => (
            "ACL_ERROR_RT_AICPU_EXCEPTION",
            "the AICPU kernel returned an error or crashed: the device's run status and the \
             device log (ASCEND_SLOG_PRINT_TO_STDOUT=1 ASCEND_GLOBAL_LOG_LEVEL=1) say why",
        ),
        507046 => (
            "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT",
            "the stream did not finish within the stream-sync timeout: the device hangs; \
             it was reset, and the device's run status (if any) says where",
        ),
        507899 => (
            "ACL_ERROR_RT_DRV_INTERNAL_ERROR",
            "a cascade after an earlier fault: look at the first error; the device needs a \
             reset (done at the end of this run)",
        ),
        507901 => (
            "ACL_ERROR_RT_AICPU_INTERNAL_ERROR",
            "a cascade after an AICPU fault: look at the first error; the device needs a \
             reset (done at the end of this run)",
        ),
        _ => return None,
    })
}
