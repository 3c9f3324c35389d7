/* A test fixture: the descriptor says ABI version 999, and its other fields have a layout this
 * host does not know. Courier must read abi_version only, and refuse the plugin. */
#include "future_abi.h"

static const struct {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *garbage;
} future_descriptor = { 999, 8, "not a name" };

COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void) {
    return (const courier_plugin_descriptor *)(const void *)&future_descriptor;
}
