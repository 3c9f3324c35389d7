// Courier is built for Linux: its engines use epoll and eventfd, and its system libraries (libcurl,
// libssh2) are found through pkg-config with apt providers. On another platform, say so at once
// rather than failing deep inside a C module.
#if !os(Linux)
#error("Courier builds on Linux only (it uses epoll, eventfd and the system's libcurl and libssh2). On Apple platforms, use Foundation's URLSession.")
#endif
