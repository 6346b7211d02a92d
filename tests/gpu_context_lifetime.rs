//! A buffer outlives every handle of its device: dropping the last `Gpu` must not release the
//! primary context under it. Alone in its binary, so no other test holds the device open.
mod common;
use common::{download, gpu, Rng};
use cudakernels::cust::device::Device;
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::cust::sys;

/// Whether device `ordinal`'s primary context is active (retained by someone).
fn primary_context_active(ordinal: u32) -> bool {
    let device = Device::get_device(ordinal).unwrap();
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: a valid device; the call writes one flags word and one int.
    let result = unsafe { sys::cuDevicePrimaryCtxGetState(device.as_raw(), &mut flags, &mut active) };
    assert_eq!(result, sys::CUresult::CUDA_SUCCESS, "cuDevicePrimaryCtxGetState");
    active != 0
}

/// Open, upload x, drop the handle, open, upload y (where x's memory was, had the context gone),
/// drop x, upload z (where y's memory was, had x's drop freed it): y must still hold y.
#[test]
fn a_buffer_dropped_after_its_handle_frees_only_its_own_memory() {
    let first = match gpu("a_buffer_dropped_after_its_handle_frees_only_its_own_memory") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("outlives_handle");
    let len = 1 << 20;
    let mut words = || -> Vec<u32> { (0..len).map(|_| rng.next_u64() as u32 >> 8).collect() };
    let (host_x, host_y, host_z) = (words(), words(), words());
    let seed = rng.seed;
    let x = DeviceBuffer::from_slice(&host_x).unwrap();
    let ordinal = first.ordinal();
    drop(first);
    assert!(primary_context_active(ordinal), "dropping the last Gpu released the primary context");
    let gpu = cudakernels::open_with(ordinal, cudakernels::ImageChoice::Auto).unwrap();
    let y = DeviceBuffer::from_slice(&host_y).unwrap();
    let (x_at, y_at) = (x.as_device_ptr().as_raw(), y.as_device_ptr().as_raw());
    drop(x);
    let z = DeviceBuffer::from_slice(&host_z).unwrap();
    let z_at = z.as_device_ptr().as_raw();
    let s = gpu.default_stream();
    let what = format!("seed {}, x at {:#x}, y at {:#x}, z at {:#x}", seed, x_at, y_at, z_at);
    assert!(download(s, &y) == host_y, "y lost its contents ({})", what);
    assert_eq!(s.sum(&y).unwrap(), host_y.iter().map(|&v| v as u64).sum::<u64>(), "sum of y ({})", what);
    let lo_hi = (*host_y.iter().min().unwrap(), *host_y.iter().max().unwrap());
    assert_eq!(s.minmax(&y).unwrap(), lo_hi, "minmax of y ({})", what);
    assert!(download(s, &z) == host_z, "z lost its contents ({})", what);
}
