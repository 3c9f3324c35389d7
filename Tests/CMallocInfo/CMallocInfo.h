// glibc's heap statistics (mallinfo2), which Swift's Glibc module does not export: tests use them
// to see that memory a C library allocated for Courier is given back.
#include <malloc.h>
