#ifndef COURIER_CSQLITE_H
#define COURIER_CSQLITE_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast expression Swift cannot import: binding with it makes SQLite copy
/// the bytes before the call returns.
static inline sqlite3_destructor_type courier_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
