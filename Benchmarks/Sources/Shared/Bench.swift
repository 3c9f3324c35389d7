// Courier's benchmark. These files (Sources/Shared/*.swift) are compiled twice:
//   bench-courier     with USE_COURIER defined, against Courier;
//   bench-foundation  without it, against swift-corelibs-foundation's FoundationNetworking.
// It uses Apple's API only (URLSession, data and download tasks, completion handlers, a delegate),
// so the import below is the only difference between the two programs.
//
// Usage: bench-<impl> <measurement> [options]
//   data-tasks     [--count N] [--window N]   data: URL tasks per second on one session
//   latency        [--count N]                create+resume+complete latency of one data: task
//   file-data      --file PATH                file: URL fetched by a data task (MB/s, peak RSS)
//   file-download  --file PATH                file: URL fetched by a download task (MB/s, peak RSS)
//   file-read      --file PATH                reference: the file read by Data(contentsOf:)
//   http-get       --url URL [--count N] [--window N] [--size BYTES] [--async 1]
//                                             small GETs per second over keep-alive (window 1:
//                                             sequential); --size is the expected body size
//   http-data      --url URL --size BYTES     a large body fetched by one data task (MB/s, peak RSS)
//   http-download  --url URL --size BYTES --file PATH
//                                             a large body fetched by a download task, moved to PATH
//   http-upload    --url URL --file PATH      PATH sent by an upload task (PUT; MB/s, peak RSS)
//                                             http-download and http-upload also take ftp: URLs
//                   [--background IDENTIFIER]  http-download only, Courier only: the same download
//                                             task in URLSessionConfiguration.background(withIdentifier:)
//                                             (carried out by Courier's transfer agent; set
//                                             COURIER_AGENT_PATH when courier-agent is not next to
//                                             this binary)
//   info                                      which implementation this binary uses
// https: Courier accepts the server's certificate by answering the server-trust challenge with
// URLCredential(trust:). FoundationNetworking has no server-trust challenge on Linux: it trusts
// what its libcurl's CA bundle trusts (Benchmarks/run.sh shows it the test certificate there).
// Common option: --timeout SECONDS (default 300): a measurement that has not finished by then
// reports "timeout" instead of hanging.
//
// Output: machine-readable lines `RESULT <name> <value> <unit>` on standard output (value may be
// `unsupported`, `timeout` or `failed`), and `NOTE <text>` lines for humans. MB is 10^6 bytes.
// The exit status is 0 when the measurement ran (even when it reported `unsupported`).

#if USE_COURIER
import Courier
#else
import FoundationNetworking
#endif
import Foundation
import Dispatch
import Synchronization

// MARK: - Entry point

@main
struct Bench {
    static let usage = """
        usage: bench-\(implementation) <measurement> [options]
          data-tasks     [--count N (20000)] [--window N (256)]
          latency        [--count N (2000)]
          file-data      --file PATH
          file-download  --file PATH
          file-read      --file PATH   (reference: Data(contentsOf:), no URLSession)
          http-get       --url URL [--count N (5000)] [--window N (1)] [--size BYTES] [--async 1]
          http-data      --url URL --size BYTES
          http-download  --url URL --size BYTES --file DESTINATION [--background IDENTIFIER]
          http-upload    --url URL --file PATH
          info
        every measurement also takes --timeout SECONDS (300)
        """

    static func main() {
        guard let options = Options.parse(Array(CommandLine.arguments.dropFirst())) else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
        switch options.command {
        case "info":
            result("implementation", implementation, "-")
        case "data-tasks":
            benchDataTasks(count: options.count ?? 20_000, window: options.window ?? 256, timeout: options.timeout)
        case "latency":
            benchLatency(count: options.count ?? 2_000, timeout: options.timeout)
        case "file-data", "file-download", "file-read":
            guard let file = options.file else {
                FileHandle.standardError.write(Data((usage + "\n").utf8))
                exit(2)
            }
            if options.command == "file-data" {
                benchFileData(path: file, timeout: options.timeout)
            } else if options.command == "file-read" {
                benchFileRead(path: file)
            } else {
                benchFileDownload(path: file, timeout: options.timeout)
            }
        case "http-get":
            guard let url = options.url else { usageError() }
            guard !options.async || (options.window ?? 1) == 1 else { usageError() }
            benchHTTPGet(url: url, count: options.count ?? 5_000, window: options.window ?? 1,
                         expectedSize: options.size, timeout: options.timeout, async: options.async)
        case "http-data":
            guard let url = options.url, let size = options.size else { usageError() }
            benchHTTPData(url: url, size: size, timeout: options.timeout)
        case "http-download":
            guard let url = options.url, let size = options.size, let file = options.file else { usageError() }
            benchHTTPDownload(url: url, size: size, destination: URL(fileURLWithPath: file), timeout: options.timeout,
                              background: options.background)
        case "http-upload":
            guard let url = options.url, let file = options.file else { usageError() }
            benchHTTPUpload(url: url, file: file, timeout: options.timeout)
        default:
            usageError()
        }
    }

    static func usageError() -> Never {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        exit(2)
    }
}
