from earshot.cli import main

raise SystemExit(main())
