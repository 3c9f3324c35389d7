// The entry points. SwiftPM links an executable target with `main` defined as `CourierFuzz_main`
// (so that test targets can link it), which rules out libFuzzer's own `main`. Built by `scripts/fuzz`
// (`-sanitize=fuzzer,address -D COURIER_FUZZ`), `CourierFuzz_main` hands the command line to
// libFuzzer's driver with `LLVMFuzzerTestOneInput`'s function. A normal build (`swift build
// --build-tests` makes every target) compiles only the stub at the end.
#if COURIER_FUZZ
import Foundation

@_extern(c, "LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The harness `COURIER_FUZZ_TARGET` names, chosen once.
let selectedHarness = ProcessInfo.processInfo.environment["COURIER_FUZZ_TARGET"].flatMap(FuzzHarness.named)

@_cdecl("CourierFuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    guard selectedHarness != nil else {
        let names = FuzzHarness.all.map(\.name).joined(separator: " ")
        FileHandle.standardError.write(Data("CourierFuzz: set COURIER_FUZZ_TARGET to one of: \(names)\n".utf8))
        return 2
    }
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzTestOneInput)
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = start.map { Data(bytes: $0, count: count) } ?? Data()
    selectedHarness?.run(input)
    return 0
}
#else
@main
enum CourierFuzzStub {
    static func main() {
        print("CourierFuzz: this build has no harness; run scripts/fuzz, which builds it with libFuzzer.")
    }
}
#endif
