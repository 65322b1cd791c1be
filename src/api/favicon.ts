// `/favicon.ico`: Lisa's icon (a white "L" on blue, 16×16), built once as an ICO holding one
// 32-bit bitmap, so a browser's automatic request finds an icon instead of a 404.

const SIZE = 16;
const BLUE = [0xd9, 0x6a, 0x25, 0xff]; // BGRA
const WHITE = [0xff, 0xff, 0xff, 0xff];

/** The "L": a stem and a foot, in pixels from the top-left corner. */
const inL = (x: number, y: number) =>
	(x >= 4 && x <= 6 && y >= 3 && y <= 12) || (x >= 4 && x <= 11 && y >= 10 && y <= 12);

function ico(): Uint8Array<ArrayBuffer> {
	const pixels = SIZE * SIZE * 4;
	const mask = SIZE * 4; // the AND mask: one bit per pixel, rows padded to 4 bytes; all opaque
	const image = 40 + pixels + mask;
	const out = new Uint8Array(6 + 16 + image);
	const view = new DataView(out.buffer);
	view.setUint16(2, 1, true); // type: icon
	view.setUint16(4, 1, true); // one image
	view.setUint8(6, SIZE);
	view.setUint8(7, SIZE);
	view.setUint16(10, 1, true); // colour planes
	view.setUint16(12, 32, true); // bits per pixel
	view.setUint32(14, image, true);
	view.setUint32(18, 22, true); // where the image starts
	view.setUint32(22, 40, true); // BITMAPINFOHEADER
	view.setInt32(26, SIZE, true);
	view.setInt32(30, SIZE * 2, true); // the bitmap's height counts the mask too
	view.setUint16(34, 1, true);
	view.setUint16(36, 32, true);
	// Rows bottom-up, as bitmaps store them.
	for (let y = 0; y < SIZE; y++)
		for (let x = 0; x < SIZE; x++)
			out.set(inL(x, SIZE - 1 - y) ? WHITE : BLUE, 62 + (y * SIZE + x) * 4);
	return out;
}

export const FAVICON = ico();
