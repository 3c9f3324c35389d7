/// Works around a libcurl stall that hangs an FTP transfer on a reused connection until its
/// connect timeout (curl issue 12033, fixed upstream in October 2023 by PR 12042; Debian 12's
/// libcurl 7.88.1 has the bug).
///
/// On a reused control connection whose directory is already the right one, the PASV/EPSV (or
/// PORT/EPRT) command is the first command of libcurl's DO phase. When the server's reply is already
/// there as libcurl checks the socket right after sending, libcurl ends the DO phase in that one
/// call, moves the transfer to DOING_MORE and returns *without* asking to be run again. In
/// DOING_MORE libcurl waits on the data connection, which it has not started yet, and so it names no
/// socket and no timer but the connect timeout: with the socket interface (``CurlMultiLoop``)
/// nothing runs the transfer again. (libcurl's easy interface runs every transfer at least once a
/// second, which is why the curl tool only pauses.) The reply ends the DO phase normally, a call
/// later, when it is slower to come, so the stall depends on timing.
///
/// The transfer's header callback sees the reply; the loop then runs every transfer once after the
/// current libcurl call (``CurlMultiLoop/nudge()``), which starts the data connection. When libcurl
/// did not stall, that pass finds nothing to do.
enum CurlFTPDoPhaseNudge {
    /// Whether the FTP reply line `line` may end libcurl's DO phase with the data connection still to
    /// be made: the last line of a reply to PASV (227), EPSV (229), or PORT/EPRT (200, also the
    /// reply to TYPE and others, for which the nudge is only unnecessary).
    static func isNeeded(afterReplyLine line: String) -> Bool {
        let utf8 = line.utf8
        guard utf8.count >= 4 else { return false }
        let prefix = utf8.prefix(4)
        return prefix.elementsEqual("227 ".utf8) || prefix.elementsEqual("229 ".utf8) || prefix.elementsEqual("200 ".utf8)
    }
}
