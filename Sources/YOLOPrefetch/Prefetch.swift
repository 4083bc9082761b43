// Software prefetch, the one thing the standard library does not offer: this target is compiled with
// `-parse-stdlib` (Package.swift) so it can reach LLVM's `llvm.prefetch` intrinsic through the `Builtin`
// module. The function is transparent: it is inlined into its callers (the kernel families' products)
// and compiles to one instruction (`prefetcht0` on x86-64, part of the baseline ISA; `prfm` on arm64).
import Swift

/// Asks the CPU to start loading the cache line holding `address` into all cache levels, without
/// waiting for it and without faulting when the address is not mapped.
@_transparent
public func prefetch(_ address: UnsafeRawPointer) {
    // (address, read = 0, locality 3 = keep in every level, data cache = 1)
    Builtin.int_prefetch_RawPointer(address._rawValue, Int32(0)._value, Int32(3)._value, Int32(1)._value)
}
