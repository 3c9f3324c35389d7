/* A test fixture: a plugin that redirects wherever its URL says, for the host's redirect rules. */
#ifndef COURIER_TEST_REDIRECTING_H
#define COURIER_TEST_REDIRECTING_H
#include "courier_plugin.h"
COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void);
#endif
