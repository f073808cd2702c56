// SQLite 3's C interface (Debian: libsqlite3-dev), for dedog's record of the photos `dedog tag` has looked at.
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import: a function that returns it.
static inline sqlite3_destructor_type dedog_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// The file system type (statfs's f_type) of the folder that would hold a database, so that a record on a network
// share, where SQLite's locks are not safe, is refused; -1 when it cannot be told. Swift's Glibc module leaves out
// sys/vfs.h.
#include <sys/vfs.h>
static inline long dedog_file_system_type(const char *path) {
    struct statfs info;
    return statfs(path, &info) == 0 ? (long)info.f_type : -1;
}
