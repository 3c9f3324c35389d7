/* The plugin contract is the header; this file only checks it compiles as C and reports its version. */
#include "courier_plugin.h"

_Static_assert(sizeof(uint32_t) == 4, "courier_plugin.h needs 32-bit uint32_t");
_Static_assert(offsetof(courier_plugin_descriptor, abi_version) == 0,
               "abi_version must stay the descriptor's first field in every ABI version");

uint32_t courier_plugin_header_abi_version(void) {
    return COURIER_PLUGIN_ABI_VERSION;
}
