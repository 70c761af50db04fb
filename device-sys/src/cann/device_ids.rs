//! Device ids: ACL takes logical ids (0.. within what `ASCEND_RT_VISIBLE_DEVICES` makes
//! visible), the driver HAL takes the driver's own ids. `ASCEND_RT_VISIBLE_DEVICES=4,5`
//! makes driver devices 4 and 5 the logical devices 0 and 1.

use std::string::String;
use std::vec::Vec;

use super::loader::CannError;
use std::format;

/// The driver id of logical device `logical`, given the value of
/// `ASCEND_RT_VISIBLE_DEVICES` (`None`: unset, every device visible, ids equal).
///
/// ```
/// use pto_device_sys::cann::driver_id_in;
/// assert_eq!(driver_id_in(1, Some("4,5")).unwrap(), 5);
/// assert_eq!(driver_id_in(3, None).unwrap(), 3);
/// assert!(driver_id_in(2, Some("4,5")).is_err());
/// ```
pub fn driver_id_in(logical: i32, visible: Option<&str>) -> Result<u32, CannError> {
    let logical_u = u32::try_from(logical)
        .map_err(|_| CannError::Invalid(format!("device {logical} is negative")))?;
    let Some(list) = visible.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(logical_u);
    };
    let ids: Vec<u32> = list
        .split(',')
        .map(|s| s.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            CannError::Invalid(format!(
                "ASCEND_RT_VISIBLE_DEVICES={list:?} is not a comma-separated list of device ids"
            ))
        })?;
    ids.get(logical_u as usize).copied().ok_or_else(|| {
        CannError::Invalid(format!(
            "device {logical} is not visible: ASCEND_RT_VISIBLE_DEVICES={list:?} makes {} \
             devices visible",
            ids.len()
        ))
    })
}

/// The driver id of logical device `logical`, from this process's environment.
pub fn driver_id(logical: i32) -> Result<u32, CannError> {
    let visible: Option<String> = std::env::var("ASCEND_RT_VISIBLE_DEVICES").ok();
    driver_id_in(logical, visible.as_deref())
}
