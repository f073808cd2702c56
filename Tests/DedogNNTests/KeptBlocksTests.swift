import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN

/// The inner maps a pass keeps for a detection neck (`InferenceSession.featuresAndMaps(_:batch:keepingBlocks:)`).
@Suite struct KeptBlocksTests {
    /// The maps the engine keeps for the neck are the blocks' outputs golden tests check: the same values as the
    /// tap of the pass that computes every block (float pass), and as many cells as the stride says.
    @Test func theKeptBlocksAreTheBackbonesOwnOutputs() throws {
        let network = try BundledModel.network
        let (fine, coarse) = network.backbone.pyramidBlocks
        let size = 96
        var random = SeededRandom(state: 5)
        let input = random.floats(3 * size * size)
        var tapped: [String: [Float]] = [:]
        let session = network.makeSession(threads: 1, precision: .fp32)
        _ = try session.features(input, batch: 1, height: size, width: size) { name, values in tapped[name] = values }
        let pass = try session.featuresAndMaps(input, batch: 1, height: size, width: size, keepingBlocks: [fine, coarse])
        for (kept, index) in zip(pass.blocks, [fine, coarse]) {
            let name = "block_" + (index < 10 ? "0" : "") + String(index)
            let nchw = try Layout.nchw(fromNHWC: kept.values, batch: 1, channels: kept.channels, plane: kept.cells)
            #expect(nchw == tapped[name], "\(name)")
        }
        #expect((pass.blocks[0].rows, pass.blocks[1].rows) == (size / 16, size / 32))
    }
}
