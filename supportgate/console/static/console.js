// supportgate console: the one script, a static file (the Content-Security-Policy allows
// script from the console itself and nothing inline; supportgate/console/headers.py).
//
// The server writes every time as <time datetime="...Z" title="... UTC">... UTC</time>, to
// the second. Only the browser knows the viewer's zone, so here each such text is rewritten
// into it, as "2026-11-30 13:00:05 CET"; the title keeps the UTC time for a hover. Without
// this script the page still reads, in UTC.
"use strict";

(function () {
  var format = new Intl.DateTimeFormat("en-GB", {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "short",
  });

  function local(moment) {
    var part = {};
    format.formatToParts(moment).forEach(function (p) {
      part[p.type] = p.value;
    });
    return (
      part.year + "-" + part.month + "-" + part.day + " " +
      part.hour + ":" + part.minute + ":" + part.second + " " + part.timeZoneName
    );
  }

  function rewrite() {
    document.querySelectorAll("time[datetime]").forEach(function (element) {
      var moment = new Date(element.getAttribute("datetime"));
      if (!isNaN(moment.getTime())) {
        element.textContent = local(moment);
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", rewrite);
  } else {
    rewrite();
  }
})();
