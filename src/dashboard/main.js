// @ts-check
import { onSignOut, token, whoami } from "./api.js";
import { tick } from "./parts.js";
import { runPage } from "./run-page.js";
import { list, runsList } from "./runs-list.js";
import { askForToken, redeem, refused, takeCode } from "./sign-in.js";
import { clearStats, stats } from "./stats.js";
import { clear, fail } from "./view.js";
import { wallMode } from "./wall.js";

// The dashboard (docs/dashboard.md › Dashboard), the page's one script (src/api/dashboard.ts loads
// it as a module; src/api/assets.ts serves it and every module it imports): it signs in, then shows
// the runs list or a run's page under the stats header, each asked for again while the page is open.

let started = false;

function start() {
	if (!token()) {
		askForToken(start);
		return;
	}
	// A token given again after one was refused: the page starts over with it.
	if (started) return location.reload();
	started = true;
	wallMode();
	whoami()
		.then(() => {
			// Relative times ("3 min ago") move on between updates.
			setInterval(tick, 10000);
			stats().catch(fail);
			setInterval(() => token() && stats().catch(fail), 15000);
			const id = location.pathname.match(/^\/runs\/([A-Za-z0-9]+)$/)?.[1];
			if (id) return runPage(id);
			/** @type {HTMLElement} */ (document.getElementById("where")).textContent = "runs";
			runsList();
			setInterval(() => token() && list().catch(fail), 3000);
			return list();
		})
		.catch(fail);
}

onSignOut(() => {
	refused(start);
	clear();
	clearStats();
});

const code = takeCode();
(code ? redeem(code) : Promise.resolve()).then(start).catch(fail);
