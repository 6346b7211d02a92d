//! Compiles the `kernels` crate to PTX with rustc_codegen_nvvm and places it in OUT_DIR.
use cuda_builder::{CudaBuilder, NvvmArch};
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=kernels/src");
    println!("cargo:rerun-if-changed=kernels/Cargo.toml");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("kernels.ptx");
    // Compute80 is the newest arch nvvm 0.1.1 knows; the driver JIT-compiles it for Hopper.
    if let Err(e) = CudaBuilder::new("kernels").arch(NvvmArch::Compute80).copy_to(&out).build() {
        panic!("building the kernels to PTX failed: {:?}", e);
    }
}
