//! Static shared memory under names the source fixes.
//!
//! `cuda_std::shared_array!` declares a static whose mangled name carries a hash of the crate's
//! build metadata, which cargo derives partly from where the toolchain's sources lie on disk: the
//! PTX would then differ between machines. These statics take their PTX name from the caller
//! (`#[no_mangle]`), so the PTX depends on the source alone. Each name must be unique in the crate.

/// A pointer to the block's static shared array `$name` of `$len` elements of `$t`. A generic
/// function has one such array, whatever its instantiation (as any static in Rust).
macro_rules! shared_array {
    ($name:ident: [$t:ty; $len:expr]) => {{
        struct Shared(core::cell::UnsafeCell<core::mem::MaybeUninit<[$t; $len]>>);
        // SAFETY: shared memory is per block; the callers order its uses with barriers.
        unsafe impl Sync for Shared {}
        // The initializer is discarded for shared statics.
        #[cuda_std::address_space(shared)]
        #[no_mangle]
        static $name: Shared = Shared(core::cell::UnsafeCell::new(core::mem::MaybeUninit::uninit()));
        $name.0.get() as *mut $t
    }};
}
pub(crate) use shared_array;
