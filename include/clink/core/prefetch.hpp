#pragma once
// A software prefetch the compiler keeps. GCC 12 drops some __builtin_prefetch calls
// whose address it computes (measured: the window engine's key-table and pane
// prefetches were missing from the binary, the loops then waited on every miss), so on
// x86 the instruction is emitted directly. A prefetch never faults: any address is fine.
namespace clink {

inline void prefetch(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace clink
