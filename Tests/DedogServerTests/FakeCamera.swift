import DedogImage
import Foundation

/// A video for Chromium's fake camera (`--use-file-for-fake-video-capture`): one still photo as a Y4M file (I420,
/// full-range BT.601, as JPEG's YCbCr), which the browser plays in a loop as the camera's picture.
enum FakeCamera {
    static func y4m(from photo: URL, to file: URL) throws {
        let image = try ImageDecoder().decode(contentsOf: photo)
        let (width, height) = (image.width & ~1, image.height & ~1)
        var y = [UInt8](repeating: 0, count: width * height)
        var u = [UInt8](repeating: 0, count: width * height / 4)
        var v = u
        func clamp(_ x: Double) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }
        func rgb(_ col: Int, _ row: Int) -> (Double, Double, Double) {
            let i = (row * image.width + col) * 3
            return (Double(image.pixels[i]), Double(image.pixels[i + 1]), Double(image.pixels[i + 2]))
        }
        for row in 0..<height {
            for col in 0..<width {
                let (r, g, b) = rgb(col, row)
                y[row * width + col] = clamp(0.299 * r + 0.587 * g + 0.114 * b)
            }
        }
        for row in stride(from: 0, to: height, by: 2) {
            for col in stride(from: 0, to: width, by: 2) {
                var (r, g, b) = (0.0, 0.0, 0.0)
                for (dc, dr) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let p = rgb(col + dc, row + dr)
                    (r, g, b) = (r + p.0 / 4, g + p.1 / 4, b + p.2 / 4)
                }
                let i = (row / 2) * (width / 2) + col / 2
                u[i] = clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b)
                v[i] = clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b)
            }
        }
        var bytes = Array("YUV4MPEG2 W\(width) H\(height) F30:1 Ip A1:1 C420jpeg\nFRAME\n".utf8)
        bytes += y + u + v
        try Data(bytes).write(to: file)
    }
}
