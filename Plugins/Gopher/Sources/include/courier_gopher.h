/* The gopher plugin exports only the plugin entry point declared in courier_plugin.h. */
#ifndef COURIER_GOPHER_H
#define COURIER_GOPHER_H

#include "courier_plugin.h"

COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void);

#endif
