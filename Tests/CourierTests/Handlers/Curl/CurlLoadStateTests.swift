import CCurl
import Foundation
import Testing
@testable import Courier

/// The transitions of a libcurl load's state (``CurlLoad/State``), on values alone: the transfer and
/// the loop are made but never run.
@Suite("libcurl load state")
struct CurlLoadStateTests {
    /// A delegate that hears nothing (no transfer runs).
    private final class SilentDelegate: CurlTransferDelegate {
        func transfer(_ transfer: CurlTransfer, didReceiveHead head: CurlResponseHead) {}
        func transfer(_ transfer: CurlTransfer, didReceive bytes: UnsafeRawBufferPointer) -> Bool { true }
        func transfer(_ transfer: CurlTransfer, didSend totalBytesSent: Int64, of expected: Int64) {}
        func transfer(_ transfer: CurlTransfer, didFinishWith result: CURLcode) {}
    }

    /// Two attempts' worth of transfers on one loop, shut down when the test is done.
    private struct Fixture {
        let delegate = SilentDelegate()
        let loop: CurlMultiLoop

        init() throws {
            loop = try #require(CurlMultiLoop(maximumConnectionsPerHost: 1))
        }

        func attempt() throws -> CurlLoad.Attempt {
            let transfer = try #require(CurlTransfer(delegate: delegate))
            return CurlLoad.Attempt(transfer: transfer, loop: loop, started: Date(), metrics: CurlLoad.MetricsContext())
        }
    }

    @Test func theFirstAttemptStartsFromIdleOnly() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let (first, second) = (try fixture.attempt(), try fixture.attempt())
        var state = CurlLoad.State.idle
        let started = state.start(first, expecting: .idle)
        let startedAgain = state.start(second, expecting: .idle)
        #expect(started)
        #expect(!startedAgain, "a second start from idle is refused")
        #expect(state.stage == .running)
    }

    @Test func anAttemptCannotStartWhileAnotherRuns() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let (first, second) = (try fixture.attempt(), try fixture.attempt())
        var state = CurlLoad.State.running(first)
        let started = state.start(second, expecting: .running)
        #expect(!started)
    }

    @Test func stoppingHandsOverTheRunningTransferOnce() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let attempt = try fixture.attempt()
        var state = CurlLoad.State.running(attempt)
        let stopped = state.stop()
        let stoppedAgain = state.stop()
        #expect(stopped?.transfer === attempt.transfer)
        #expect(stoppedAgain == nil, "a second stop has nothing to take off the loop")
        #expect(state.stage == .stopped)
    }

    @Test func aStoppedLoadStartsNoRetry() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let retry = try fixture.attempt()
        var state = CurlLoad.State.challenging
        _ = state.stop()
        let started = state.start(retry, expecting: .challenging)
        #expect(!started)
    }

    @Test func aFinishedLoadStaysFinishedWhenStopped() {
        var state = CurlLoad.State.finished
        let stopped = state.stop()
        #expect(stopped == nil)
        #expect(state.stage == .finished)
    }

    @Test func theEndOfTheRunningTransferLeadsToADecision() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let attempt = try fixture.attempt()
        var state = CurlLoad.State.running(attempt)
        _ = state.markResponseDelivered()
        let ended = state.end(attempt.transfer)
        #expect(ended?.responseDelivered == true)
        #expect(state.stage == .deciding)
    }

    @Test func theEndOfAnotherTransferChangesNothing() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let running = try fixture.attempt()
        let other = try fixture.attempt()
        var state = CurlLoad.State.running(running)
        let ended = state.end(other.transfer)
        #expect(ended == nil)
        #expect(state.attempt?.transfer === running.transfer)
    }

    @Test func theEndOfATransferAfterAStopChangesNothing() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let attempt = try fixture.attempt()
        var state = CurlLoad.State.running(attempt)
        _ = state.stop()
        let ended = state.end(attempt.transfer)
        #expect(ended == nil)
        #expect(state.stage == .stopped)
    }

    @Test func endingTheLoadMidTransferHandsOverTheTransfer() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let attempt = try fixture.attempt()
        var state = CurlLoad.State.running(attempt)
        let left = state.move(to: .finished, from: .running)
        #expect(left?.attempt?.transfer === attempt.transfer)
        #expect(state.stage == .finished)
    }

    @Test func aTransitionFromAnotherStateIsRefused() {
        var state = CurlLoad.State.stopped
        let left = state.move(to: .finished, from: .deciding)
        #expect(left == nil)
        #expect(state.stage == .stopped)
    }

    @Test func waitingStatesAreEnteredOnlyFromTheDecision() {
        var state = CurlLoad.State.deciding
        let challenged = state.move(to: .challenging, from: .deciding)
        let redirected = state.move(to: .redirected, from: .deciding)
        #expect(challenged != nil)
        #expect(redirected == nil, "the load is challenging now")
        #expect(state.stage == .challenging)
    }

    @Test func noTransitionButStartLeadsToRunning() throws {
        let fixture = try Fixture()
        defer { fixture.loop.shutDown() }
        let attempt = try fixture.attempt()
        var state = CurlLoad.State.deciding
        let left = state.move(to: .running(attempt), from: .deciding)
        #expect(left == nil)
        #expect(state.stage == .deciding)
    }
}
